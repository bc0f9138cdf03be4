package io.thallus.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.QueryRequest;
import io.thallus.StatusCode;
import io.thallus.ThallusClient;
import io.thallus.ThallusException;
import io.thallus.ThallusStream;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Joins over files pushed like joins over tables: one request binds each side's files under a view of its own, so
 * a join of two Parquet datasets (through the catalog's {@code files} namespace or the format's {@code dataset})
 * runs as one DuckDB query, with the rows DuckDB gives run directly on the same files; and the request's named
 * datasets refuse bad names and paths with errors that say what is wrong.
 */
class DatasetJoinTest {
  private static final String ORDERS = "SELECT i AS o_orderkey, DATE '1994-01-01' + (i % 700)::INTEGER AS o_orderdate,"
      + " (i % 5)::INTEGER AS o_shippriority, ['BUILDING','MACHINERY'][1 + i % 2] AS o_segment FROM range(20000) t(i)";
  private static final String LINEITEM = "SELECT i % 20000 AS l_orderkey,"
      + " (900 + (i * 37) % 100000 / 100.0)::DECIMAL(15,2) AS l_extendedprice,"
      + " ((i % 11) / 100.0)::DECIMAL(15,2) AS l_discount, (1 + i % 50)::DECIMAL(15,2) AS l_quantity,"
      + " DATE '1992-01-02' + (i * 13 % 2500)::INTEGER AS l_shipdate FROM range(60000) t(i)";
  /** TPC-H Q3's shape. */
  private static final String Q3 = "SELECT l_orderkey, sum(l_extendedprice * (1 - l_discount)) AS revenue,"
      + " o_orderdate, o_shippriority FROM %s JOIN %s ON l_orderkey = o_orderkey WHERE o_segment = 'BUILDING'"
      + " AND o_orderdate < DATE '1995-03-15' AND l_shipdate > DATE '1995-03-15'"
      + " GROUP BY l_orderkey, o_orderdate, o_shippriority ORDER BY revenue DESC, o_orderdate LIMIT 10";
  private static TestServer server;
  private static SparkSession spark;

  @BeforeAll
  static void start() throws SQLException {
    server = new TestServer();
    spark = TestSpark.session();
    duckdb("COPY (" + ORDERS + ") TO '" + server.dataRoot().resolve("orders.parquet") + "' (FORMAT parquet)");
    // Four row groups, so that a split of the file has four parts.
    duckdb("COPY (" + LINEITEM + ") TO '" + server.dataRoot().resolve("lineitem.parquet")
        + "' (FORMAT parquet, ROW_GROUP_SIZE 15000)");
    duckdb("COPY (" + ORDERS + ") TO '" + server.dataRoot().resolve("orders.csv") + "' (FORMAT csv)");
    duckdb("ATTACH '" + server.dataRoot().resolve("shop.duckdb") + "' AS shop; CREATE TABLE shop.orders AS "
        + ORDERS);
    spark.conf().set("spark.sql.catalog.thallus_dj", ThallusCatalog.class.getName());
    spark.conf().set("spark.sql.catalog.thallus_dj.url", server.url());
  }

  @AfterAll
  static void stop() throws Exception {
    server.close();
  }

  @AfterEach
  void memoryReturned() {
    assertThat(Connector.allocatedBytes()).as("bytes the connector's clients still hold").isZero();
  }

  @Test
  void aJoinOfTwoParquetDatasetsInTheCatalogRunsAsOneDuckDBQuery() throws SQLException {
    String q3 = Q3.formatted("thallus_dj.files.`orders.parquet`", "thallus_dj.files.`lineitem.parquet`");
    List<String> expected = expected(Q3.formatted("orders", "lineitem"));
    List<String> pushedRows = new ArrayList<>();
    // One scan in the plan: the join, its filters, the aggregate and the top-N in one query.
    ThallusScan scan = withJoinPushdown(() -> {
      Dataset<Row> pushed = spark.sql(q3);
      pushedRows.addAll(rows(pushed));
      return Plans.scan(pushed);
    });
    assertThat(pushedRows).hasSize(10).isEqualTo(expected);
    assertThat(scan.sql()).contains(") AS thallus_left JOIN (", "GROUP BY", "LIMIT 10",
        "FROM \"" + JoinSources.viewName("orders.parquet") + "\"",
        "FROM \"" + JoinSources.viewName("lineitem.parquet") + "\"");
    assertThat(scan.description()).contains("pushedJoin=[JOIN ON", "datasets={thallus_dataset_");
    // Without Spark's switch the same rows come from a join in Spark.
    assertThat(rows(spark.sql(q3))).isEqualTo(expected);
  }

  @Test
  void formatReadsOfDatasetsJoinOnTheServerAQuerySeeingItsOwnFilesAsDataset() throws SQLException {
    String expectedSql = Q3.formatted("orders", "(SELECT * FROM lineitem WHERE l_quantity < 40) AS l");
    List<String> expected = expected(expectedSql);
    List<String> pushedRows = new ArrayList<>();
    String sql = withJoinPushdown(() -> {
      spark.read().format("thallus").option("url", server.url()).option("dataset", "orders.parquet").load()
          .createOrReplaceTempView("dj_orders");
      // The other side is a query over its own dataset, which it names 'dataset'.
      spark.read().format("thallus").option("url", server.url()).option("dataset", "lineitem.parquet")
          .option("query", "SELECT * FROM dataset WHERE l_quantity < 40").load().createOrReplaceTempView("dj_items");
      Dataset<Row> pushed = spark.sql(Q3.formatted("dj_orders", "dj_items"));
      pushedRows.addAll(rows(pushed));
      return Plans.scan(pushed).sql();
    });
    assertThat(pushedRows).isEqualTo(expected);
    assertThat(sql).contains("WITH dataset AS (SELECT * FROM \"" + JoinSources.viewName("lineitem.parquet") + "\")");
  }

  @Test
  void aThreeWayJoinOfFilesAndATableAndCsvRunsAsOneQuery() throws SQLException {
    server.execute("CREATE OR REPLACE TABLE segments AS SELECT * FROM (VALUES ('BUILDING', 1), ('MACHINERY', 2))"
        + " t(segment, rank)");
    String sql = "SELECT rank, count(*) AS n, sum(l_quantity) AS q FROM thallus_dj.files.`orders.csv`"
        + " JOIN thallus_dj.files.`lineitem.parquet` ON l_orderkey = o_orderkey"
        + " JOIN thallus_dj.main.segments ON o_segment = segment GROUP BY rank ORDER BY rank";
    List<String> expected = expected(sql.replace("thallus_dj.files.`orders.csv`", "orders")
        .replace("thallus_dj.files.`lineitem.parquet`", "lineitem")
        .replace("thallus_dj.main.segments", "(VALUES ('BUILDING', 1), ('MACHINERY', 2)) t(segment, rank)"));
    List<String> pushedRows = new ArrayList<>();
    String pushedSql = withJoinPushdown(() -> {
      Dataset<Row> pushed = spark.sql(sql);
      pushedRows.addAll(rows(pushed));
      return Plans.scan(pushed).sql();
    });
    assertThat(pushedRows).hasSize(2).isEqualTo(expected);
    assertThat(pushedSql).contains(JoinSources.viewName("orders.csv"),
        JoinSources.viewName("lineitem.parquet"), "\"main\".\"segments\"");
  }

  @Test
  void aDatabaseFileJoinsFilesInSparkNotOnTheServer() throws SQLException {
    String sql = "SELECT count(*), sum(l_quantity) FROM dj_shop JOIN thallus_dj.files.`lineitem.parquet`"
        + " ON l_orderkey = o_orderkey WHERE o_segment = 'BUILDING'";
    List<String> expected = expected(sql.replace("dj_shop", "orders")
        .replace("thallus_dj.files.`lineitem.parquet`", "lineitem"));
    List<String> plans = new ArrayList<>();
    List<String> got = withJoinPushdown(() -> {
      spark.read().format("thallus").option("url", server.url()).option("dataset", "shop.duckdb")
          .option("table", "orders").load().createOrReplaceTempView("dj_shop");
      Dataset<Row> df = spark.sql(sql);
      plans.add(df.queryExecution().executedPlan().toString());
      return rows(df);
    });
    assertThat(got).isEqualTo(expected);
    assertThat(plans.get(0)).doesNotContain("pushedJoin");
  }

  /**
   * With {@code partitions} > 1 a pushed join is split by its left side: rowid ranges of a table, row groups of a
   * Parquet dataset. Each partition joins its share with the whole right side, aggregates partially, and Spark
   * merges; the rows are those of one partition, and the scan's stage runs one task per share.
   */
  @Test
  void aPushedJoinSplitsAcrossPartitionsByItsLeftTableOrParquetFiles() throws Exception {
    server.execute("CREATE OR REPLACE TABLE li AS SELECT * FROM read_parquet('"
        + server.dataRoot().resolve("lineitem.parquet") + "')");
    server.execute("CREATE OR REPLACE TABLE ord AS SELECT * FROM read_parquet('"
        + server.dataRoot().resolve("orders.parquet") + "')");
    spark.conf().set("spark.sql.catalog.thallus_dj4", ThallusCatalog.class.getName());
    spark.conf().set("spark.sql.catalog.thallus_dj4.url", server.url());
    spark.conf().set("spark.sql.catalog.thallus_dj4.partitions", "4");
    String q3 = Q3.formatted("%1$s.main.li", "%1$s.main.ord");
    String outer = "SELECT o_segment, count(*) AS n, avg(l_quantity) AS q, min(l_shipdate) AS first,"
        + " sum(l_extendedprice) AS total FROM %1$s.main.li LEFT JOIN %1$s.main.ord ON l_orderkey = o_orderkey"
        + " AND o_shippriority = 1 WHERE l_quantity < 45 GROUP BY o_segment ORDER BY o_segment";
    String files = "%1$s.files.`lineitem.parquet`";
    for (String query : List.of(q3, outer, q3.replace("%1$s.main.li", files).replace("%1$s.main.ord",
        "%1$s.files.`orders.parquet`"), outer.replace("%1$s.main.li", files))) {
      boolean ofFiles = query.contains(files);
      List<String> whole = withJoinPushdown(() -> rows(spark.sql(query.formatted("thallus_dj"))));
      List<Integer> scanTasks = new java.util.concurrent.CopyOnWriteArrayList<>();
      org.apache.spark.scheduler.SparkListener listener = new org.apache.spark.scheduler.SparkListener() {
        @Override
        public void onStageCompleted(org.apache.spark.scheduler.SparkListenerStageCompleted completed) {
          var info = completed.stageInfo();
          if (scala.jdk.javaapi.CollectionConverters.asJava(info.rddInfos()).stream()
              .anyMatch(rdd -> rdd.name().contains("DataSourceRDD"))) {
            scanTasks.add(info.numTasks());
          }
        }
      };
      spark.sparkContext().addSparkListener(listener);
      List<String> split = new ArrayList<>();
      List<ThallusInputPartition> partitions = new ArrayList<>();
      String description;
      try {
        description = withJoinPushdown(() -> {
          Dataset<Row> df = spark.sql(query.formatted("thallus_dj4"));
          split.addAll(rows(df));
          partitions.addAll(Plans.partitions(df));
          return Plans.scan(df).description();
        });
        // Spark's listener bus delivers the stage's end after the job returns: wait until it has delivered all.
        spark.sparkContext().listenerBus().waitUntilEmpty(60_000);
      } finally {
        spark.sparkContext().removeSparkListener(listener);
      }
      assertThat(split).as(query).isNotEmpty().isEqualTo(whole);
      assertThat(description).contains("pushedJoin=[",
          ofFiles ? "partitions=4 (4 by Parquet row groups)" : "partitions=4 (4 by rowid ranges)");
      assertThat(partitions).hasSize(4).allSatisfy(partition -> assertThat(partition.sql()).contains(ofFiles
          ? "WITH thallus_driving AS (SELECT * EXCLUDE (file_row_number) FROM read_parquet("
          : "WITH thallus_driving AS (SELECT * FROM \"main\".\"li\" WHERE rowid"));
      assertThat(scanTasks).as("tasks of the scan's stage").containsExactly(4);
    }
    assertThat(withJoinPushdown(() -> rows(spark.sql(q3.formatted("thallus_dj4")))))
        .isEqualTo(expected(Q3.formatted("lineitem", "orders")));
  }

  @Test
  void namedDatasetsBindOnlyPlainNamesOfFilesUnderTheDataRoot() {
    try (BufferAllocator allocator = new RootAllocator();
         ThallusClient client = ThallusClient.connect(allocator, io.thallus.Location.parse(server.url()))) {
      QueryRequest two = QueryRequest.builder("SELECT count(*) FROM o JOIN l ON l_orderkey = o_orderkey")
          .dataset("o", "orders.parquet").dataset("l", "lineitem.parquet").build();
      assertThat(two.namedDatasets()).containsKeys("o", "l");
      assertThat(single(client, two)).isEqualTo(60000L);
      // Described without running, with the same views bound.
      assertThat(client.describeStatement(two).result().getFields()).hasSize(1);
      // A later request of the same session that binds other names no longer sees the earlier views.
      assertThat(single(client, QueryRequest.builder("SELECT count(*) FROM o2").dataset("o2", "orders.csv")
          .build())).isEqualTo(20000L);
      assertThatThrownBy(() -> single(client, QueryRequest.of("SELECT count(*) FROM o")))
          .hasMessageContaining("o");

      assertThatThrownBy(() -> QueryRequest.builder("SELECT 1").dataset("two words", "orders.parquet"))
          .hasMessageContaining("not a plain SQL identifier");
      assertThatThrownBy(() -> QueryRequest.builder("SELECT 1").dataset("dataset", "orders.parquet"))
          .hasMessageContaining("the request's own dataset");
      assertThatThrownBy(() -> QueryRequest.builder("SELECT 1").dataset("o", "a.parquet").dataset("O", "b.parquet"))
          .hasMessageContaining("differ only in case");
      assertThatThrownBy(() -> QueryRequest.builder("SELECT 1").option("thallus.dataset.x", "orders.parquet"))
          .hasMessageContaining("dataset(name, path)");
      assertRefused(client, "../outside.parquet", StatusCode.PERMISSION_DENIED, "dataset 'x': ",
          "outside the data root");
      assertRefused(client, "/etc/passwd", StatusCode.PERMISSION_DENIED, "dataset 'x': ", "absolute path");
      assertRefused(client, "missing.parquet", StatusCode.NOT_FOUND, "dataset 'x': ", "does not exist");
      assertRefused(client, "shop.duckdb", StatusCode.INVALID_ARGUMENT, "dataset 'x' is a DuckDB database file");
    }
  }

  /** The catalog's files namespace says what is wrong with a path instead of "no such table" for everything. */
  @Test
  void theFilesNamespaceRefusesPathsOutsideTheDataRootByName() {
    assertThatThrownBy(() -> spark.sql("SELECT * FROM thallus_dj.files.`../outside.parquet`").collectAsList())
        .hasMessageContaining("cannot read thallus_dj.files.`../outside.parquet`")
        .hasMessageContaining("outside the data root");
    assertThatThrownBy(() -> spark.sql("SELECT * FROM thallus_dj.files.`missing.parquet`").collectAsList())
        .hasMessageContaining("TABLE_OR_VIEW_NOT_FOUND");
  }

  private static void assertRefused(ThallusClient client, String path, StatusCode code, String... message) {
    assertThatThrownBy(() -> single(client, QueryRequest.builder("SELECT count(*) FROM x").dataset("x", path)
        .build()))
        .isInstanceOfSatisfying(ThallusException.class, e -> assertThat(e.code()).isEqualTo(code))
        .hasMessageContainingAll(message);
  }

  private static long single(ThallusClient client, QueryRequest request) {
    try (ThallusStream stream = client.query(request)) {
      long value = -1;
      while (stream.hasNext()) {
        try (var batch = stream.next()) {
          if (batch.getRowCount() > 0) {
            value = ((Number) batch.getVector(0).getObject(0)).longValue();
          }
        }
      }
      return value;
    }
  }

  /** Runs {@code body} with Spark's DSv2 join pushdown on (off by default in Spark 4.2). */
  private static <T> T withJoinPushdown(java.util.function.Supplier<T> body) {
    spark.conf().set("spark.sql.optimizer.datasourceV2JoinPushdown", "true");
    try {
      return body.get();
    } finally {
      spark.conf().unset("spark.sql.optimizer.datasourceV2JoinPushdown");
    }
  }

  private static List<String> rows(Dataset<Row> df) {
    return Answers.rows(df);
  }

  /**
   * DuckDB's answer to {@code sql} run directly over the files (views orders and lineitem), as {@link #rows} prints
   * it; Spark sorts ascending NULLS FIRST, so the SQL says so.
   */
  private static List<String> expected(String sql) throws SQLException {
    try (Connection connection = DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = connection.createStatement()) {
      statement.execute("CREATE VIEW orders AS SELECT * FROM read_parquet('"
          + server.dataRoot().resolve("orders.parquet") + "')");
      statement.execute("CREATE VIEW lineitem AS SELECT * FROM read_parquet('"
          + server.dataRoot().resolve("lineitem.parquet") + "')");
      return Answers.duckdb(statement, sql.replace("o_orderdate LIMIT", "o_orderdate NULLS FIRST LIMIT"));
    }
  }

  private static void duckdb(String sql) throws SQLException {
    try (Connection connection = DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = connection.createStatement()) {
      for (String part : sql.split("; ")) {
        statement.execute(part);
      }
    }
  }
}
