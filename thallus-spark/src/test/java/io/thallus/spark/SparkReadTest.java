package io.thallus.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.server.Authentication;
import io.thallus.Location;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec;
import org.apache.spark.sql.functions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Reading, pushdown and errors, against a real server and a local[2] Spark; every result checked by value. */
class SparkReadTest {
  private static final String NUMBERS = "SELECT i AS id, i % 10 AS bucket, 'n' || i AS name, i * 0.5 AS half"
      + " FROM range(1000) t(i)";
  private static TestServer server;
  private static SparkSession spark;

  @BeforeAll
  static void start() {
    server = new TestServer();
    spark = TestSpark.session();
  }

  @AfterAll
  static void stop() throws Exception {
    server.close();
  }

  @AfterEach
  void memoryReturned() {
    assertThat(Connector.allocatedBytes()).as("bytes the connector's clients still hold").isZero();
  }

  private Dataset<Row> numbers() {
    return spark.read().format("thallus").option("url", server.url()).option("query", NUMBERS).load();
  }

  private static String plan(Dataset<Row> df) {
    return df.queryExecution().executedPlan().toString();
  }

  /** The SQL the planned scan runs on the server (every pushdown applied, partition predicate aside). */
  private static String scanSql(Dataset<Row> df) {
    return scan(df).sql();
  }

  private static ThallusScan scan(Dataset<Row> df) {
    return Plans.scan(df);
  }


  @Test
  void readsAQueryWithItsSchemaFromTheServer() {
    Dataset<Row> df = numbers();
    assertThat(df.schema().simpleString()).isEqualTo("struct<id:bigint,bucket:bigint,name:string,half:decimal(21,1)>");
    List<Row> rows = df.orderBy("id").collectAsList();
    assertThat(rows).hasSize(1000);
    for (int i = 0; i < rows.size(); i++) {
      Row row = rows.get(i);
      assertThat(row.getLong(0)).isEqualTo(i);
      assertThat(row.getLong(1)).isEqualTo(i % 10);
      assertThat(row.getString(2)).isEqualTo("n" + i);
      assertThat(row.getDecimal(3)).isEqualByComparingTo(java.math.BigDecimal.valueOf(i).multiply(new java.math.BigDecimal("0.5")));
    }
  }

  @Test
  void worksAsATemporaryViewInSql() {
    spark.sql("CREATE OR REPLACE TEMPORARY VIEW numbers USING thallus OPTIONS (url '" + server.url()
        + "', query \"" + NUMBERS + "\")");
    List<Row> rows = spark.sql("SELECT bucket, count(*) FROM numbers GROUP BY bucket ORDER BY bucket").collectAsList();
    assertThat(rows).hasSize(10);
    assertThat(rows).allSatisfy(r -> assertThat(r.getLong(1)).isEqualTo(100L));
  }

  @Test
  void prunesColumns() {
    Dataset<Row> df = numbers().select("name");
    assertThat(df.collectAsList()).hasSize(1000);
    assertThat(scan(df).readSchema().fieldNames()).containsExactly("name");
    assertThat(scanSql(df)).startsWith("SELECT \"name\"\nFROM");
  }

  @Test
  void pushesFiltersDuckDBCanRunAndKeepsTheRestInSpark() {
    Dataset<Row> df = numbers()
        .filter("bucket = 3 AND id >= 500 AND name LIKE 'n5%' AND (id IN (503, 513, 523, 999) OR id IS NULL)")
        // A function DuckDB is not asked to run (Spark maps case with full Unicode rules, DuckDB per code point).
        .filter(functions.upper(functions.col("name")).equalTo("N503").or(functions.upper(functions.col("name"))
            .equalTo("N513")).or(functions.upper(functions.col("name")).equalTo("N523")));
    List<Row> rows = df.collectAsList();
    assertThat(rows).extracting(r -> r.getLong(0)).containsExactlyInAnyOrder(503L, 513L, 523L);
    String sql = scanSql(df);
    assertThat(sql).contains("(\"bucket\" = CAST(3 AS BIGINT))", "(\"id\" >= CAST(500 AS BIGINT))",
        "starts_with(\"name\", 'n5')", "\"id\" IN (CAST(503 AS BIGINT)");
    assertThat(sql).doesNotContain("upper");
    assertThat(plan(df)).contains("pushedFilters=[").contains("starts_with(\"name\", 'n5')").contains("upper(name");
  }

  @Test
  void pushedLiteralsOfEveryScalarTypeSelectWhatDuckDBSelects() throws java.sql.SQLException {
    String query = "SELECT i AS id, DATE '2024-01-01' + i::INTEGER AS d,"
        + " TIMESTAMP '2024-01-01 00:00:00' + INTERVAL (i * 90) MINUTES AS ts,"
        + " TIMESTAMPTZ '2024-01-01 00:00:00+00' + INTERVAL (i * 90) MINUTES AS tz,"
        + " (i / 4)::DECIMAL(10,2) AS dec, 'it''s ' || i AS s, ('\\x01' || i::VARCHAR)::BLOB AS b,"
        + " i / 8 AS f, i % 3 = 0 AS flag, i::TINYINT AS tiny FROM range(100) t(i)";
    Dataset<Row> df = spark.read().format("thallus").option("url", server.url()).option("query", query).load()
        .filter("d >= DATE '2024-02-01' AND ts < TIMESTAMP_NTZ '2024-01-05 12:00:00'"
            + " AND tz > TIMESTAMP '2024-01-01 18:00:00+00:00' AND dec <> 20.25 AND s <> 'it''s 50'"
            + " AND flag = true AND f <= 12.0 AND tiny > 30 AND b <> X'0135'");
    List<Long> ids = df.collectAsList().stream().map(r -> r.getLong(0)).sorted().toList();
    List<Long> expected = TypeMappingTest.duckdb("SELECT id FROM (" + query + ") WHERE d >= DATE '2024-02-01'"
        + " AND ts < TIMESTAMP '2024-01-05 12:00:00' AND tz > TIMESTAMPTZ '2024-01-01 18:00:00+00'"
        + " AND dec <> 20.25 AND s <> 'it''s 50' AND flag AND f <= 12.0 AND tiny > 30 AND b <> '\\x015'::BLOB"
        + " ORDER BY id").stream().map(r -> Long.parseLong((String) r.get(0))).toList();
    assertThat(ids).isNotEmpty().isEqualTo(expected);
    String sql = scanSql(df);
    assertThat(sql).contains("DATE '2024-02-01'", "TIMESTAMP '2024-01-05T12:00'", "TIMESTAMPTZ '2024-01-01T18:00+00'",
        "CAST('20.25' AS DECIMAL(", "'it''s 50'", "\"flag\" = TRUE", "'\\x01\\x35'::BLOB");
    assertThat(plan(df)).doesNotContain("Filter ("); // nothing left for Spark
  }

  @Test
  void pushesLimitAndTopN() {
    Dataset<Row> limited = numbers().limit(5);
    assertThat(limited.collectAsList()).hasSize(5);
    assertThat(scanSql(limited)).endsWith("LIMIT 5");
    assertThat(plan(limited)).contains("pushedLimit=5");

    Dataset<Row> top = numbers().orderBy(functions.col("half").desc()).limit(3);
    assertThat(top.collectAsList()).extracting(r -> r.getLong(0)).containsExactly(999L, 998L, 997L);
    assertThat(scanSql(top)).endsWith("ORDER BY \"half\" DESC NULLS LAST\nLIMIT 3");
    assertThat(plan(top)).contains("pushedTopN=[ORDER BY \"half\" DESC NULLS LAST LIMIT 3]");
  }

  @Test
  void pushesExactAggregates() {
    Dataset<Row> df = numbers().groupBy("bucket").agg(functions.count("*"), functions.sum("id"),
        functions.min("name"), functions.max("half")).orderBy("bucket");
    List<Row> rows = df.collectAsList();
    assertThat(rows).hasSize(10);
    Row three = rows.get(3);
    assertThat(three.getLong(1)).isEqualTo(100L);
    assertThat(three.getLong(2)).isEqualTo(49_800L); // 3 + 13 + ... + 993
    assertThat(three.getString(3)).isEqualTo("n103"); // string order: n103 < n113 < ... < n13 < n3
    assertThat(three.getDecimal(4)).isEqualByComparingTo("496.5");
    String sql = scanSql(df);
    assertThat(sql).contains("count(*)", "CAST(sum(\"id\") AS BIGINT)", "min(\"name\")", "max(\"half\")",
        "GROUP BY \"bucket\"");
    assertThat(plan(df)).contains("pushedAggregate=[");
  }

  @Test
  void keepsInexactAggregatesInSpark() {
    Dataset<Row> df = spark.read().format("thallus").option("url", server.url())
        .option("query", "SELECT i / 3.0::DOUBLE AS x FROM range(100) t(i)").load().agg(functions.sum("x"));
    assertThat(df.collectAsList().get(0).getDouble(0)).isCloseTo(1650.0, org.assertj.core.data.Offset.offset(1e-9));
    assertThat(scanSql(df)).doesNotContain("sum(");
    assertThat(plan(df)).doesNotContain("pushedAggregate");
  }

  @Test
  void countWithoutColumnsStillCountsRows() {
    Dataset<Row> df = spark.read().format("thallus").option("url", server.url()).option("query", NUMBERS)
        .option("pushDownAggregate", "false").load();
    assertThat(df.count()).isEqualTo(1000L);
    assertThat(scanSql(df.groupBy().count())).startsWith("SELECT " + ScanQuery.NO_COLUMNS);
  }

  @Test
  void aFailingQueryFailsTheSparkJobWithTheServersMessage() {
    Dataset<Row> df = spark.read().format("thallus").option("url", server.url())
        .option("query", "SELECT CASE WHEN i = 700 THEN error('no row 700 today') ELSE i END AS v FROM range(1000) t(i)")
        .load();
    assertThatThrownBy(df::collectAsList)
        .isInstanceOf(org.apache.spark.SparkException.class)
        .hasMessageContaining("no row 700 today");
  }

  @Test
  void aStreamSparkStopsReadingEarlyIsClosedAndReleased() {
    // No limit in the SQL: the server streams all 1M rows while Spark stops after 5 and ends the task.
    Dataset<Row> df = spark.read().format("thallus").option("url", server.url()).option("pushDownLimit", "false")
        .option("batchRows", "1024").option("query", "SELECT i FROM range(1000000) t(i)").load().limit(5);
    assertThat(df.collectAsList()).hasSize(5);
    assertThat(scanSql(df)).doesNotContain("LIMIT");
    // memoryReturned() checks that the connector holds no batch afterwards
  }

  @Test
  void rowsAreServedFromTheSameBatchesWhenAPlanAsksForRows() {
    ThallusScan scan = (ThallusScan) new ThallusScanBuilder(
        ReadConf.from(java.util.Map.of("url", server.url(), "query", NUMBERS, "batchRows", "100")),
        TypeMapping.columns(List.of(
            org.apache.arrow.vector.types.pojo.Field.nullable("id", new org.apache.arrow.vector.types.pojo.ArrowType.Int(64, true)),
            org.apache.arrow.vector.types.pojo.Field.nullable("bucket", new org.apache.arrow.vector.types.pojo.ArrowType.Int(64, true)))))
        .build();
    long sum = 0;
    int count = 0;
    try (var reader = scan.createReaderFactory().createReader(scan.planInputPartitions()[0])) {
      while (reader.next()) {
        sum += reader.get().getLong(0);
        count++;
      }
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    assertThat(count).isEqualTo(1000);
    assertThat(sum).isEqualTo(999L * 1000 / 2);
  }

  @Test
  void aHugeintBeyondDecimal38FailsWithDuckDBsMessage() {
    Dataset<Row> df = spark.read().format("thallus").option("url", server.url())
        .option("query", "SELECT 170141183460469231731687303715884105727::HUGEINT AS h").load();
    assertThat(df.schema().simpleString()).isEqualTo("struct<h:decimal(38,0)>");
    assertThatThrownBy(df::collectAsList).hasMessageContaining("DECIMAL(38,0)");
  }

  @Test
  void aServerThatIsGoneFailsTheTaskWithTheClientsStatus() throws Exception {
    Dataset<Row> df;
    try (TestServer doomed = new TestServer()) {
      df = spark.read().format("thallus").option("url", doomed.url()).option("query", NUMBERS).load();
    }
    assertThatThrownBy(df::collectAsList)
        .isInstanceOf(org.apache.spark.SparkException.class)
        .hasMessageContaining("UNAVAILABLE");
  }

  @Test
  void aServerThatWantsATokenGetsItFromTheOptions() {
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer guarded = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create())
             .authentication(Authentication.token("s3cret")).build().start()) {
      String url = guarded.getLocation().withTransport("tcp").toString();
      Dataset<Row> df = spark.read().format("thallus").option("url", url).option("token", "s3cret")
          .option("query", "SELECT 42 AS answer").load();
      assertThat(df.collectAsList().get(0).getInt(0)).isEqualTo(42);
      assertThatThrownBy(() -> spark.read().format("thallus").option("url", url).option("token", "wrong")
          .option("query", "SELECT 42 AS answer").load())
          .hasMessageContaining("UNAUTHENTICATED");
    }
  }

  @Test
  void aQueryTheServerCannotCompileFailsAtLoad() {
    assertThatThrownBy(() -> spark.read().format("thallus").option("url", server.url())
        .option("query", "SELECT no_such_column FROM range(3)").load())
        .hasMessageContaining("no_such_column");
  }

  @Test
  void missingOptionsAreNamed() {
    assertThatThrownBy(() -> spark.read().format("thallus").option("query", "SELECT 1").load())
        .hasMessageContaining("'url'");
    assertThatThrownBy(() -> spark.read().format("thallus").option("url", server.url()).load())
        .hasMessageContaining("'query'");
    assertThatThrownBy(() -> spark.read().format("thallus").option("url", server.url()).option("query", "SELECT 1")
        .option("partitions", "zero").load())
        .hasMessageContaining("'partitions' must be an integer");
    assertThatThrownBy(() -> spark.read().format("thallus").option("url", server.url()).option("query", "SELECT 1")
        .option("partition", "4").load())
        .hasMessageContaining("unknown option 'partition'").hasMessageContaining("did you mean 'partitions'?");
    assertThatThrownBy(() -> spark.sql("CREATE OR REPLACE TEMPORARY VIEW bad USING thallus OPTIONS (url '"
        + server.url() + "', query 'SELECT 1', pushdownfilter 'false')"))
        .hasMessageContaining("unknown option 'pushdownfilter'").hasMessageContaining("'pushDownFilters'");
  }
}
