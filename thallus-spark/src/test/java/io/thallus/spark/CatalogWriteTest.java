package io.thallus.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.ThallusClient;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The catalog (listing, DDL, reads) and writes (writeTo, format("thallus") in every save mode, CREATE/REPLACE ...
 * AS SELECT) against a real server; every write read back and compared row by row with the DataFrame written, and
 * failed or cancelled jobs shown to leave the table as it was and no staging table behind.
 */
class CatalogWriteTest {
  /** A DataFrame of most scalar types and an array, in 3 partitions, computed by Spark. */
  private static final String[] ROWS = {"id", "CAST(id % 7 AS INT) AS small",
      "CAST(id / 4 AS DECIMAL(12,2)) AS price", "concat('r', id) AS name",
      "date_add(DATE '2024-01-01', CAST(id % 400 AS INT)) AS day", "timestamp_seconds(1700000000 + id * 61) AS at",
      "id % 3 = 0 AS flag", "id / 8.0D AS ratio", "CAST(concat('b', id % 5) AS BINARY) AS bytes",
      "array(id, id + 1) AS pair", "CASE WHEN id % 10 = 0 THEN NULL ELSE id END AS maybe",
      "CASE WHEN id % 4 = 0 THEN NULL ELSE CAST(id * 1000 - 499999.999 AS DECIMAL(18,3)) END AS fee",
      "CAST(id * 1000000000000 + 0.25 AS DECIMAL(24,2)) AS big"};
  private static TestServer server;
  private static SparkSession spark;

  @BeforeAll
  static void start() throws SQLException {
    server = new TestServer();
    spark = TestSpark.session();
    spark.conf().set("spark.sql.catalog.thallus", ThallusCatalog.class.getName());
    spark.conf().set("spark.sql.catalog.thallus.url", server.url());
    server.execute("CREATE TABLE cities AS SELECT * FROM (VALUES (1, 'Lyon', 513275), (2, 'Gent', 262219))"
        + " t(id, name, people)");
    server.execute("CREATE SCHEMA sales");
    server.execute("CREATE VIEW sales.big_cities AS SELECT name FROM cities WHERE people > 300000");
    java.nio.file.Path dir = server.dataRoot().resolve("tpch");
    try {
      java.nio.file.Files.createDirectories(dir);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = duckdb.createStatement()) {
      statement.execute("COPY (SELECT i AS k, i * 2 AS v FROM range(50) t(i)) TO '" + dir.resolve("nation.parquet")
          + "' (FORMAT parquet)");
    }
  }

  @AfterAll
  static void stop() throws Exception {
    server.close();
  }

  @AfterEach
  void memoryReturnedAndNothingStaged() {
    assertThat(Connector.allocatedBytes()).as("bytes the connector's clients still hold").isZero();
    assertThat(serverRows("SELECT table_name FROM duckdb_tables() WHERE starts_with(table_name, 'thallus_staging')"))
        .as("staging tables left behind").isEmpty();
  }

  private static List<List<String>> serverRows(String sql) {
    try (org.apache.arrow.memory.BufferAllocator allocator = new org.apache.arrow.memory.RootAllocator();
         ThallusClient client = ThallusClient.connect(allocator,
             io.thallus.Location.parse(server.url()))) {
      return ServerSql.rows(client, sql);
    }
  }

  private static long serverCount(String table) {
    return Long.parseLong(serverRows("SELECT count(*) FROM " + table).get(0).get(0));
  }

  private static Dataset<Row> source(long rows) {
    return spark.range(0, rows, 1, 3).selectExpr(ROWS);
  }

  /** Rows of {@code df} sorted by their first column, as text. */
  private static List<String> sorted(Dataset<Row> df) {
    List<String> rows = new ArrayList<>();
    for (Row row : df.orderBy(df.columns()[0]).collectAsList()) {
      List<String> values = new ArrayList<>();
      for (int c = 0; c < row.length(); c++) {
        Object value = row.get(c);
        values.add(switch (value) {
          case null -> "NULL";
          case byte[] bytes -> java.util.HexFormat.of().formatHex(bytes);
          case scala.collection.Seq<?> seq -> seq.toString();
          case java.math.BigDecimal d -> d.stripTrailingZeros().toPlainString();
          default -> value.toString();
        });
      }
      rows.add(String.join("|", values));
    }
    return rows;
  }

  @Test
  void listsNamespacesTablesViewsAndDatasets() {
    assertThat(spark.sql("SHOW NAMESPACES IN thallus").collectAsList()).extracting(r -> r.getString(0))
        .contains("main", "sales", "files").doesNotContain("thallus_staging", "information_schema");
    assertThat(spark.sql("SHOW TABLES IN thallus.main").collectAsList()).extracting(r -> r.getString(1))
        .contains("cities");
    assertThat(spark.sql("SHOW TABLES IN thallus.sales").collectAsList()).extracting(r -> r.getString(1))
        .containsExactly("big_cities");
    assertThat(spark.sql("SHOW TABLES IN thallus.files").collectAsList()).extracting(r -> r.getString(1))
        .containsExactly("tpch/nation.parquet");
    assertThat(spark.sql("DESCRIBE thallus.main.cities").collectAsList()).extracting(r -> r.getString(0) + ":"
        + r.getString(1)).containsExactly("id:int", "name:string", "people:int");

    assertThat(sorted(spark.sql("SELECT * FROM thallus.main.cities"))).containsExactly("1|Lyon|513275",
        "2|Gent|262219");
    assertThat(sorted(spark.table("thallus.sales.big_cities"))).containsExactly("Lyon");
    Dataset<Row> nation = spark.sql("SELECT sum(v), count(*) FROM thallus.files.`tpch/nation.parquet` WHERE k < 10");
    assertThat(sorted(nation)).containsExactly("90|10");
    assertThat(Plans.scan(nation).sql()).contains("sum(").contains("(\"k\" < CAST(10 AS BIGINT))");
  }

  @Test
  void createInsertSelectAndDropThroughSql() {
    spark.sql("CREATE TABLE thallus.main.notes (id BIGINT, body STRING, at DATE) USING thallus");
    assertThat(serverRows("SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = 'notes'"
        + " ORDER BY column_index")).containsExactly(List.of("id", "BIGINT"), List.of("body", "VARCHAR"),
        List.of("at", "DATE"));
    spark.sql("INSERT INTO thallus.main.notes VALUES (1, 'first', DATE '2024-02-29'), (2, NULL, NULL)");
    spark.sql("INSERT INTO thallus.main.notes SELECT id + 10, concat('n', id), NULL FROM range(3)");
    assertThat(sorted(spark.table("thallus.main.notes"))).containsExactly("1|first|2024-02-29", "2|NULL|NULL",
        "10|n0|NULL", "11|n1|NULL", "12|n2|NULL");
    spark.sql("INSERT OVERWRITE thallus.main.notes SELECT 7, 'only', DATE '2025-01-01'");
    assertThat(sorted(spark.table("thallus.main.notes"))).containsExactly("7|only|2025-01-01");
    spark.sql("DROP TABLE thallus.main.notes");
    assertThat(spark.sql("SHOW TABLES IN thallus.main").collectAsList()).extracting(r -> r.getString(1))
        .doesNotContain("notes");

    spark.sql("CREATE NAMESPACE thallus.scratch");
    spark.sql("CREATE TABLE thallus.scratch.t USING thallus AS SELECT id, id * id AS sq FROM range(5)");
    assertThat(sorted(spark.table("thallus.scratch.t"))).containsExactly("0|0", "1|1", "2|4", "3|9", "4|16");
    spark.sql("CREATE OR REPLACE TABLE thallus.scratch.t USING thallus AS SELECT 'x' AS s");
    assertThat(sorted(spark.table("thallus.scratch.t"))).containsExactly("x");
    spark.sql("DROP NAMESPACE thallus.scratch CASCADE");
    assertThat(spark.sql("SHOW NAMESPACES IN thallus").collectAsList()).extracting(r -> r.getString(0))
        .doesNotContain("scratch");
  }

  @Test
  void refusesWhatDuckDBTablesCannotBe() {
    assertThatThrownBy(() -> spark.sql("CREATE TABLE thallus.main.p (a INT, b INT) USING thallus PARTITIONED BY (b)"))
        .hasMessageContaining("no partitions");
    assertThatThrownBy(() -> spark.range(3).writeTo("thallus.files.`x.parquet`").create())
        .hasMessageContaining("read only");
    assertThatThrownBy(() -> spark.range(3).writeTo("thallus.sales.big_cities").append())
        .hasMessageContaining("big_cities");
  }

  @Test
  void writeToAppendsOverwritesAndReplacesWithEveryRowAndType() throws Exception {
    Dataset<Row> rows = source(5_000);
    rows.writeTo("thallus.main.written").create();
    assertThat(sorted(spark.table("thallus.main.written"))).isEqualTo(sorted(rows));
    assertThat(serverRows("SELECT data_type FROM duckdb_columns() WHERE table_name = 'written' ORDER BY column_index"))
        .extracting(r -> r.get(0)).containsExactly("BIGINT", "INTEGER", "DECIMAL(12,2)", "VARCHAR", "DATE",
            "TIMESTAMP WITH TIME ZONE", "BOOLEAN", "DOUBLE", "BLOB", "BIGINT[]", "BIGINT", "DECIMAL(18,3)",
            "DECIMAL(24,2)");

    Dataset<Row> more = source(7_000).filter("id >= 5000");
    more.writeTo("thallus.main.written").append();
    assertThat(serverCount("written")).isEqualTo(7_000);
    assertThat(sorted(spark.table("thallus.main.written"))).isEqualTo(sorted(source(7_000)));

    Dataset<Row> few = source(10);
    few.writeTo("thallus.main.written").overwritePartitions();
    assertThat(sorted(spark.table("thallus.main.written"))).isEqualTo(sorted(few));

    Dataset<Row> other = spark.range(0, 4, 1, 2).selectExpr("id AS k", "concat('v', id) AS v");
    other.writeTo("thallus.main.written").createOrReplace();
    assertThat(sorted(spark.table("thallus.main.written"))).containsExactly("0|v0", "1|v1", "2|v2", "3|v3");
    spark.sql("DROP TABLE thallus.main.written");
  }

  /**
   * Strings and binary, which {@link VarWidthWriter} copies straight into Arrow's buffers: NULLs, empty values,
   * multi-byte UTF-8, bytes 0x00 to 0xFF, values from 1 byte to 220 KB (the first one, on a task's first batch, far
   * more than the buffer then holds), in batches of 4,096 rows (the writer reset between them), and a column of only
   * NULLs. Read back and compared value by value, and counted in DuckDB, which also checked every string's UTF-8.
   */
  @Test
  void stringsAndBinaryArriveByteForByteAcrossBatches() {
    Dataset<Row> rows = spark.range(0, 100_000, 1, 2).selectExpr("id",
        "CASE WHEN id % 13 = 3 THEN NULL WHEN id % 13 = 4 THEN '' WHEN id % 13 = 5 THEN 'é€😀'"
            + " ELSE concat(id, ':', repeat(substr('aé€😀z', CAST(1 + id % 5 AS INT)),"
            + " CAST(IF(id % 997 = 0, 20000, pmod(id * 7919, 97)) AS INT))) END AS s",
        "CASE WHEN id % 17 = 6 THEN NULL WHEN id % 17 = 7 THEN CAST('' AS BINARY)"
            + " ELSE unhex(repeat(lpad(hex(id % 256), 2, '0'), CAST(pmod(id * 31, 300) AS INT))) END AS b",
        "CAST(NULL AS STRING) AS nothing");
    rows.write().format("thallus").option("url", server.url()).option("table", "main.texts")
        .option("batchRows", "4096").mode("errorifexists").save();
    assertThat(sorted(spark.table("thallus.main.texts"))).isEqualTo(sorted(rows));
    Row expected = rows.selectExpr("count(s)", "sum(octet_length(s))", "count_if(s = '')",
        "count_if(s = 'é€😀')", "max(octet_length(s))", "count(b)", "sum(octet_length(b))",
        "count_if(octet_length(b) = 0)", "count(nothing)").first();
    List<String> counts = new ArrayList<>();
    for (int c = 0; c < expected.length(); c++) {
      counts.add(String.valueOf(expected.get(c)));
    }
    assertThat(serverRows("SELECT count(s), sum(strlen(s)), count(*) FILTER (WHERE s = ''),"
        + " count(*) FILTER (WHERE s = 'é€😀'), max(strlen(s)), count(b), sum(octet_length(b)),"
        + " count(*) FILTER (WHERE octet_length(b) = 0), count(nothing) FROM texts"))
        .containsExactly(counts);
    assertThat(Long.parseLong(counts.get(4))).as("the longest string's bytes").isGreaterThan(200_000);
    server.execute("DROP TABLE texts");
  }

  @Test
  void formatWritesHonourEverySaveMode() {
    Dataset<Row> rows = spark.range(0, 1_000, 1, 2).selectExpr("id", "id * 3 AS triple");
    var writer = rows.write().format("thallus").option("url", server.url()).option("table", "main.saved");
    writer.mode("errorifexists").save();
    assertThat(serverCount("main.saved")).isEqualTo(1_000);
    assertThatThrownBy(() -> writer.mode("errorifexists").save()).hasMessageContaining("already exists");
    writer.mode("append").save();
    assertThat(serverCount("main.saved")).isEqualTo(2_000);
    writer.mode("ignore").save();
    assertThat(serverCount("main.saved")).isEqualTo(2_000);
    rows.limit(10).write().format("thallus").option("url", server.url()).option("table", "main.saved")
        .mode("overwrite").save();
    assertThat(sorted(spark.read().format("thallus").option("url", server.url()).option("table", "main.saved")
        .load())).isEqualTo(sorted(rows.limit(10)));
    assertThatThrownBy(() -> rows.write().format("thallus").option("url", server.url())
        .option("query", "SELECT 1").mode("append").save()).hasMessageContaining("option 'table'");
    server.execute("DROP TABLE saved");
  }

  @Test
  void aFailedJobLeavesTheTableAsItWasAndNoStagingBehind() throws Exception {
    spark.range(0, 100).writeTo("thallus.main.kept").create();
    // Partition 0 commits its staging table; partition 1 fails once it has written rows (after a pause, so the
    // other task is done): the driver aborts, drops the committed staging table, and the table keeps its 100 rows.
    Dataset<Row> failing = spark.range(0, 20_000, 1, 2).selectExpr("CASE WHEN id = 19999 THEN"
        + " raise_error(concat('boom', coalesce(reflect('java.lang.Thread', 'sleep', 1500L), ''))) ELSE id END AS id");
    assertThatThrownBy(() -> failing.writeTo("thallus.main.kept").append()).hasMessageContaining("boom");
    assertThat(serverCount("kept")).isEqualTo(100);
    // memoryReturnedAndNothingStaged() checks no staging table is left
    spark.sql("DROP TABLE thallus.main.kept");
  }

  /**
   * Waits up to 60 s for a job of {@code group} to run, then asserts one does: a cancel sent before the job exists
   * would cancel nothing, and the write would simply succeed. (A running job, not an active task: Spark's status
   * store writes a stage's task counts at most every 100 ms, and may show none while two short tasks run.)
   */
  private static void awaitRunningJob(String group) throws InterruptedException {
    org.apache.spark.SparkStatusTracker status = spark.sparkContext().statusTracker();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    boolean running = false;
    while (!running && System.nanoTime() < deadline) {
      Thread.sleep(10);
      for (int id : status.getJobIdsForGroup(group)) {
        scala.Option<org.apache.spark.SparkJobInfo> job = status.getJobInfo(id);
        running |= job.isDefined() && job.get().status() == org.apache.spark.JobExecutionStatus.RUNNING;
      }
    }
    assertThat(running).as("a job of %s runs", group).isTrue();
  }

  @Test
  void aCancelledJobLeavesTheTableAsItWas() throws Exception {
    spark.range(0, 10).writeTo("thallus.main.cancelled").create();
    Dataset<Row> slow = spark.range(0, 4_000, 1, 2)
        .selectExpr("id + length(coalesce(reflect('java.lang.Thread', 'sleep', 1L), '')) AS id");
    spark.sparkContext().setJobGroup("slow-write", "a write cancelled midway", true);
    CompletableFuture<Void> write = CompletableFuture.runAsync(() -> {
      spark.sparkContext().setJobGroup("slow-write", "a write cancelled midway", true);
      try {
        slow.writeTo("thallus.main.cancelled").append();
      } catch (org.apache.spark.sql.AnalysisException e) {
        throw new IllegalStateException(e);
      }
    });
    awaitRunningJob("slow-write");
    spark.sparkContext().cancelJobGroup("slow-write");
    assertThatThrownBy(() -> write.get(60, TimeUnit.SECONDS)).hasMessageContaining("cancel");
    spark.sparkContext().clearJobGroup();
    assertThat(serverCount("cancelled")).isEqualTo(10);
    spark.sql("DROP TABLE thallus.main.cancelled");
  }
}
