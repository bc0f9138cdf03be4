package io.thallus.spark;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.functions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Each way of splitting a scan, proven on the data: the partitions together hold every row exactly once (count,
 * distinct ids, and the sum of ids all equal the whole), every partition holds some, and each partition's SQL is
 * the one the rule says.
 */
class PartitionTest {
  private static final int ROWS = 10_000;
  private static final long ID_SUM = (long) ROWS * (ROWS - 1) / 2;
  /** DuckDB's rows per row group: a table of {@link #BIG_ROWS} rows has 4 full groups and a fifth of 1,000 rows. */
  private static final long ROW_GROUP = 122_880;
  private static final long BIG_ROWS = 4 * ROW_GROUP + 1_000;
  /** The same rows, in the server's own database under a plain and a quoted, spaced, mixed-case name. */
  private static final String BIG_SELECT = "SELECT i AS id, i % 7 AS k, 'v' || (i % 100) AS v FROM range(" + BIG_ROWS
      + ") t(i)";
  private static TestServer server;
  private static TestServer second;
  private static SparkSession spark;

  @BeforeAll
  static void start() throws SQLException {
    server = new TestServer();
    second = new TestServer();
    spark = TestSpark.session();
    String root = server.dataRoot().toString();
    try (Connection connection = DriverManager.getConnection("jdbc:duckdb:" + root + "/numbers.duckdb");
         Statement statement = connection.createStatement()) {
      statement.execute("CREATE TABLE numbers AS SELECT i AS id, i % 7 AS k, 'v' || i AS v FROM range(" + ROWS + ") t(i)");
      statement.execute("CREATE VIEW numbers_view AS SELECT * FROM numbers");
    }
    server.execute("CREATE TABLE big AS " + BIG_SELECT);
    server.execute("CREATE SCHEMA \"Sales Data\"");
    server.execute("CREATE TABLE \"Sales Data\".\"Line Items\" AS " + BIG_SELECT);
    spark.conf().set("spark.sql.catalog.thallus_split", ThallusCatalog.class.getName());
    spark.conf().set("spark.sql.catalog.thallus_split.url", server.url());
    spark.conf().set("spark.sql.catalog.thallus_split.partitions", "4");
    try (Connection connection = DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = connection.createStatement()) {
      statement.execute("CREATE TABLE numbers AS SELECT i AS id, i % 7 AS k, 'v' || i AS v FROM range(" + ROWS + ") t(i)");
      // Three files of 2,000 / 3,000 / 5,000 rows in row groups of 2,048 rows (DuckDB's smallest): 1 + 2 + 3 groups.
      new java.io.File(root, "numbers_pq").mkdirs();
      statement.execute("COPY (SELECT * FROM numbers WHERE id < 2000 ORDER BY id) TO '" + root
          + "/numbers_pq/a.parquet' (FORMAT parquet, ROW_GROUP_SIZE 2048)");
      statement.execute("COPY (SELECT * FROM numbers WHERE id >= 2000 AND id < 5000 ORDER BY id) TO '" + root
          + "/numbers_pq/b.parquet' (FORMAT parquet, ROW_GROUP_SIZE 2048)");
      statement.execute("COPY (SELECT * FROM numbers WHERE id >= 5000 ORDER BY id) TO '" + root
          + "/numbers_pq/c.parquet' (FORMAT parquet, ROW_GROUP_SIZE 2048)");
    }
  }

  @AfterAll
  static void stop() throws Exception {
    try {
      server.close();
    } finally {
      second.close();
    }
  }

  @AfterEach
  void memoryReturned() {
    assertThat(Connector.allocatedBytes()).isZero();
  }

  /** The SQL each planned partition of {@code df} runs on its server. */
  private static List<String> partitionSql(Dataset<Row> df) {
    return Plans.partitions(df).stream().map(ThallusInputPartition::sql).toList();
  }

  private static Dataset<Row> read(String url, Map<String, String> options) {
    return spark.read().format("thallus").option("url", url).options(options).load();
  }

  /** Every id once, and rows in each of the {@code partitions} partitions. */
  private static void assertCoversEveryRowOnce(Dataset<Row> df, int partitions) {
    assertThat(df.rdd().getNumPartitions()).isEqualTo(partitions);
    Row totals = df.agg(functions.count("*"), functions.countDistinct("id"), functions.sum("id")).collectAsList().get(0);
    assertThat(totals.getLong(0)).as("rows").isEqualTo(ROWS);
    assertThat(totals.getLong(1)).as("distinct ids").isEqualTo(ROWS);
    assertThat(totals.getLong(2)).as("sum of ids").isEqualTo(ID_SUM);
    List<Row> perPartition = df.groupBy(functions.spark_partition_id().as("p")).count().collectAsList();
    assertThat(perPartition).hasSize(partitions).allSatisfy(r -> assertThat(r.getLong(1)).isPositive());
  }

  @Test
  void aQuerySplitsByHashOfTheWholeRow() {
    Dataset<Row> df = read(server.url(), Map.of("query", "SELECT i AS id, 'x' || i AS s FROM range(" + ROWS + ") t(i)",
        "partitions", "3"));
    assertCoversEveryRowOnce(df, 3);
    assertThat(partitionSql(df)).anyMatch(s -> s.contains("hash(\"id\", \"s\") % 3 = 0"))
        .anyMatch(s -> s.contains("hash(\"id\", \"s\") % 3 = 2"));
  }

  @Test
  void aPartitionColumnSplitsByItsHash() {
    Dataset<Row> df = read(server.url(), Map.of("query", "SELECT i AS id, i % 7 AS k FROM range(" + ROWS + ") t(i)",
        "partitions", "4", "partitionColumn", "id"));
    assertCoversEveryRowOnce(df, 4);
    assertThat(partitionSql(df)).anyMatch(s -> s.contains("hash(\"id\") % 4 = 3"));
  }

  @Test
  void anUnknownPartitionColumnIsNamedOnTheDriver() {
    Dataset<Row> df = read(server.url(), Map.of("query", "SELECT i AS id FROM range(10) t(i)", "partitions", "2",
        "partitionColumn", "nope"));
    org.assertj.core.api.Assertions.assertThatThrownBy(df::collectAsList)
        .hasMessageContaining("'partitionColumn' names no column of the result: 'nope'");
  }

  @Test
  void aTableSplitsByRowIdRanges() {
    Dataset<Row> df = read(server.url(), Map.of("dataset", "numbers.duckdb", "table", "numbers", "partitions", "4"));
    assertCoversEveryRowOnce(df, 4);
    assertThat(partitionSql(df)).anyMatch(s -> s.contains("SELECT * FROM \"numbers\" WHERE rowid < 2500\n"))
        .anyMatch(s -> s.contains("WHERE rowid >= 2500 AND rowid < 5000\n"))
        .anyMatch(s -> s.contains("SELECT * FROM \"numbers\" WHERE rowid >= 7500\n"));
  }

  @Test
  void aQualifiedOrQuotedTableSplitsByRowIdRangesToo() {
    for (String name : List.of("main.numbers", "\"main\".\"numbers\"")) {
      Dataset<Row> df = read(server.url(), Map.of("dataset", "numbers.duckdb", "table", name, "partitions", "4"));
      assertCoversEveryRowOnce(df, 4);
      assertThat(partitionSql(df)).as(name)
          .anyMatch(s -> s.contains("SELECT * FROM \"main\".\"numbers\" WHERE rowid < 2500\n"))
          .anyMatch(s -> s.contains("SELECT * FROM \"main\".\"numbers\" WHERE rowid >= 7500\n"));
    }
  }

  @Test
  void aViewHasNoRowIdAndSplitsByHash() {
    Dataset<Row> df = read(server.url(), Map.of("dataset", "numbers.duckdb", "table", "numbers_view", "partitions", "2"));
    assertCoversEveryRowOnce(df, 2);
    assertThat(partitionSql(df)).anyMatch(s -> s.contains("% 2 = 1"));
    assertThat(Plans.scan(df).description()).contains("partitions=2 (2 by hash(row))");
  }

  @Test
  void aParquetDatasetSplitsByRowGroups() {
    Dataset<Row> df = read(server.url(), Map.of("dataset", "numbers_pq", "partitions", "3"));
    assertCoversEveryRowOnce(df, 3);
    List<String> ctes = partitionSql(df).stream().filter(s -> s.startsWith("WITH dataset AS")).distinct().toList();
    assertThat(ctes).hasSizeGreaterThanOrEqualTo(3);
    assertThat(ctes).allSatisfy(s -> assertThat(s).contains("read_parquet(", "file_row_number >= "));
    // more partitions than row groups: one per row group (6), never an empty one
    Dataset<Row> fine = read(server.url(), Map.of("dataset", "numbers_pq", "partitions", "50"));
    assertCoversEveryRowOnce(fine, 6);
  }

  @Test
  void severalServersShareThePartitionsAndArePreferredLocations() {
    String query = "SELECT i AS id FROM range(" + ROWS + ") t(i)";
    Dataset<Row> df = read(server.url() + "," + second.url(), Map.of("query", query, "partitions", "4"));
    assertCoversEveryRowOnce(df, 4);
    assertThat(Plans.partitions(df).stream().map(p -> p.conf().urls().get(p.server())).distinct())
        .containsExactlyInAnyOrder(server.url(), second.url());
    ThallusScan scan = (ThallusScan) new ThallusScanBuilder(
        ReadConf.from(Map.of("url", server.url() + "," + second.url(), "query", query, "partitions", "4")),
        List.of(new TypeMapping.Column("id", "\"id\"", org.apache.spark.sql.types.DataTypes.LongType))).build();
    InputPartition[] planned = scan.planInputPartitions();
    assertThat(Arrays.stream(planned).map(p -> ((ThallusInputPartition) p).server()).toList())
        .containsExactly(0, 1, 0, 1);
    assertThat(planned).allSatisfy(p -> assertThat(p.preferredLocations()).containsExactly("127.0.0.1"));
  }

  @Test
  void partialAggregatesOfSeveralPartitionsAreMergedBySpark() throws SQLException {
    Dataset<Row> df = read(server.url(), Map.of("dataset", "numbers.duckdb", "table", "numbers", "partitions", "3"))
        .groupBy("k").agg(functions.count("*"), functions.sum("id"), functions.max("v"));
    Map<Long, String> byKey = new TreeMap<>();
    for (Row row : df.collectAsList()) {
      byKey.put(row.getLong(0), row.getLong(1) + "/" + row.getLong(2) + "/" + row.getString(3));
    }
    Map<Long, String> expected = new TreeMap<>();
    for (List<Object> row : TypeMappingTest.duckdb("SELECT i % 7, count(*), sum(i)::BIGINT, max('v' || i) FROM range("
        + ROWS + ") t(i) GROUP BY 1")) {
      expected.put(Long.parseLong((String) row.get(0)), row.get(1) + "/" + row.get(2) + "/" + row.get(3));
    }
    assertThat(byKey).isEqualTo(expected);
    assertThat(partitionSql(df).stream().filter(s -> s.contains("GROUP BY \"k\"")).collect(Collectors.toSet()))
        .hasSize(3);
  }

  /**
   * A table of the server's database, named qualified, quoted, or both, through the catalog and through the format,
   * splits by rowid ranges; each partition reads only its share of the table (DuckDB's own account of the row groups
   * its scan read, from EXPLAIN ANALYZE of the partition's SQL on the server); and the answers equal DuckDB's.
   */
  @Test
  void aTableOfTheServersDatabaseSplitsByRowIdThroughTheCatalogAndTheFormat() throws Exception {
    Map<String, Dataset<Row>> reads = new java.util.LinkedHashMap<>();
    reads.put("catalog main.big", spark.table("thallus_split.main.big"));
    reads.put("catalog `Sales Data`.`Line Items`", spark.table("thallus_split.`Sales Data`.`Line Items`"));
    for (String table : List.of("big", "main.big", "\"main\".\"big\"", "\"Sales Data\".\"Line Items\"")) {
      reads.put("format " + table, read(server.url(), Map.of("table", table, "partitions", "4")));
    }
    List<Object> expected = TypeMappingTest.duckdb("SELECT count(*), sum(id)::BIGINT, sum(k)::BIGINT, "
        + "count(DISTINCT v) FROM (" + BIG_SELECT + ")").get(0);
    for (Map.Entry<String, Dataset<Row>> entry : reads.entrySet()) {
      Dataset<Row> df = entry.getValue();
      assertThat(Plans.scan(df).description()).as(entry.getKey()).contains("partitions=4 (4 by rowid ranges)");
      List<String> sql = partitionSql(df);
      assertThat(sql).as(entry.getKey()).hasSize(4).allSatisfy(s -> assertThat(s).contains("rowid").doesNotContain(
          "hash("));
      long groupsRead = 0;
      long rowsReturned = 0;
      for (String partition : sql) {
        TableScan scan = scanOf(partition);
        assertThat(scan.groups()).as(entry.getKey() + ": row groups of the table").isEqualTo(5);
        // A range of a quarter of the rowids lies within two of the table's row groups.
        assertThat(scan.groupsRead()).as(entry.getKey() + ": row groups one partition read").isBetween(1L, 2L);
        groupsRead += scan.groupsRead();
        rowsReturned += scan.rows();
      }
      assertThat(rowsReturned).as(entry.getKey() + ": rows of all partitions").isEqualTo(BIG_ROWS);
      // Together the partitions read each row group once, but where a boundary falls inside one (three at most).
      assertThat(groupsRead).as(entry.getKey() + ": row groups all partitions read").isLessThanOrEqualTo(5 + 3);
      Row totals = df.agg(functions.count("*"), functions.sum("id"), functions.sum("k"), functions.countDistinct("v"))
          .collectAsList().get(0);
      assertThat(List.of(totals.getLong(0), totals.getLong(1), totals.getLong(2), totals.getLong(3)))
          .as(entry.getKey()).containsExactlyElementsOf(expected.stream().map(v -> Long.parseLong(v.toString()))
              .toList());
      assertThat(df.rdd().getNumPartitions()).isEqualTo(4);
    }
  }

  @Test
  void aMissingTableFailsThePlanInsteadOfSplittingByHash() {
    ReadConf conf = ReadConf.from(Map.of("url", server.url(), "table", "main.nope", "partitions", "2"));
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> Partitioner.plan(conf))
        .hasMessageContaining("cannot split \"main\".\"nope\" into partitions")
        .hasMessageContaining("nope");
  }

  /**
   * A server short of something now (here: of connections) answers RESOURCE_EXHAUSTED, which says nothing about
   * the table: the plan fails with the server's message instead of splitting by hash as if the table had no rowid.
   */
  @Test
  void aServerShortOfResourcesFailsThePlanInsteadOfSplittingByHash() throws Exception {
    try (TestServer full = new TestServer(builder -> builder.maxConnections(1));
         org.apache.arrow.memory.BufferAllocator allocator = new org.apache.arrow.memory.RootAllocator();
         io.thallus.ThallusClient only = io.thallus.ThallusClient.connect(allocator,
             io.thallus.Location.parse(full.url()))) {
      ServerSql.execute(only, "CREATE TABLE t AS SELECT range AS id FROM range(1000)", false);
      ReadConf conf = ReadConf.from(Map.of("url", full.url(), "table", "t", "partitions", "2"));
      org.assertj.core.api.Assertions.assertThatThrownBy(() -> Partitioner.plan(conf))
          .isInstanceOfSatisfying(io.thallus.ThallusException.class,
              e -> assertThat(e.code()).isEqualTo(io.thallus.StatusCode.RESOURCE_EXHAUSTED))
          .hasMessageContaining("cannot split \"t\" into partitions");
    }
  }

  /** The one table scan in DuckDB's profile of {@code sql} run on the server: what it read and returned. */
  private record TableScan(long groups, long groupsRead, long rows) {}

  private static TableScan scanOf(String sql) throws Exception {
    List<TableScan> scans = new java.util.ArrayList<>();
    try (org.apache.arrow.memory.BufferAllocator allocator = new org.apache.arrow.memory.RootAllocator();
         io.thallus.ThallusClient client = io.thallus.ThallusClient.connect(allocator,
             io.thallus.Location.parse(server.url()))) {
      for (List<String> row : ServerSql.rows(client, "EXPLAIN (ANALYZE, FORMAT JSON) " + sql)) {
        collectScans(new com.fasterxml.jackson.databind.ObjectMapper().readTree(row.get(1)), scans);
      }
    }
    assertThat(scans).as("table scans in the profile of " + sql).hasSize(1);
    return scans.get(0);
  }

  private static void collectScans(com.fasterxml.jackson.databind.JsonNode node, List<TableScan> scans) {
    if ("TABLE_SCAN".equals(node.path("type").asText())) {
      scans.add(new TableScan(node.path("total_row_groups_to_scan").asLong(-1), node.path("row_groups_scanned")
          .asLong(-1), node.path("intermediate_rows").asLong(-1)));
    }
    for (com.fasterxml.jackson.databind.JsonNode child : node.isArray() ? node : node.path("operator").isArray()
        ? node.path("operator") : node.path("children")) {
      collectScans(child, scans);
    }
  }
}
