package io.thallus.spark;

import static org.apache.spark.sql.functions.avg;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.count;
import static org.apache.spark.sql.functions.countDistinct;
import static org.apache.spark.sql.functions.desc;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.max;
import static org.apache.spark.sql.functions.min;
import static org.apache.spark.sql.functions.sum;
import static org.apache.spark.sql.functions.when;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDate;
import java.util.List;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Whole-query pushdown on a lineitem-shaped Parquet file (TPC-H's columns and types, made by DuckDB): each pushed
 * shape's rows equal DuckDB's answer to the same query run directly on the file, and each shape whose meaning differs
 * between Spark and DuckDB is shown to stay in Spark, with Spark's answer.
 */
class PushdownTest {
  private static final String LINEITEM = "SELECT i AS l_orderkey, (i % 7)::INTEGER AS l_linenumber,"
      + " (1 + i % 50)::DECIMAL(15,2) AS l_quantity, (900 + (i * 37) % 100000 / 100.0)::DECIMAL(15,2) AS l_extendedprice,"
      + " ((i % 11) / 100.0)::DECIMAL(15,2) AS l_discount, ((i % 9) / 100.0)::DECIMAL(15,2) AS l_tax,"
      + " ['A','N','R'][1 + i % 3] AS l_returnflag, ['F','O'][1 + (i // 3) % 2] AS l_linestatus,"
      + " DATE '1992-01-02' + (i * 13 % 2500)::INTEGER AS l_shipdate,"
      + " CASE WHEN i % 97 = 0 THEN NULL ELSE ['MAIL','SHIP','AIR','RAIL'][1 + i % 4] END AS l_shipmode,"
      + " i * 1000000000000 AS l_big"
      + " FROM range(30000) t(i)";
  private static TestServer server;
  private static SparkSession spark;
  private static String file;

  @BeforeAll
  static void start() throws SQLException {
    server = new TestServer();
    spark = TestSpark.session();
    String path = server.dataRoot().resolve("lineitem.parquet").toString();
    duckdb("COPY (" + LINEITEM + ") TO '" + path + "' (FORMAT parquet)");
    file = path;
  }

  @AfterAll
  static void stop() throws Exception {
    server.close();
  }

  @AfterEach
  void memoryReturned() {
    assertThat(Connector.allocatedBytes()).as("bytes the connector's clients still hold").isZero();
  }

  private static Dataset<Row> lineitem(String... options) {
    var reader = spark.read().format("thallus").option("url", server.url()).option("dataset", "lineitem.parquet");
    for (int i = 0; i < options.length; i += 2) {
      reader = reader.option(options[i], options[i + 1]);
    }
    return reader.load();
  }

  private static List<String> rows(Dataset<Row> df) {
    return Answers.rows(df);
  }

  /** DuckDB's answer to {@code sql} over the same file (the table {@code lineitem}), as {@link #rows} prints it. */
  private static List<String> duckdb(String sql) throws SQLException {
    try (Connection connection = DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = connection.createStatement()) {
      if (file != null) {
        statement.execute("CREATE VIEW lineitem AS SELECT * FROM read_parquet('" + file + "')");
      }
      return Answers.duckdb(statement, sql);
    }
  }

  private static ThallusScan scan(Dataset<Row> df) {
    return Plans.scan(df);
  }

  private static String explain(Dataset<Row> df) {
    return df.queryExecution().executedPlan().toString();
  }

  @Test
  void tpchQ1RunsWhollyInDuckDB() throws SQLException {
    Dataset<Row> q1 = lineitem()
        .filter(col("l_shipdate").leq(lit(LocalDate.parse("1998-09-02"))))
        .groupBy("l_returnflag", "l_linestatus")
        .agg(sum("l_quantity").as("sum_qty"), sum("l_extendedprice").as("sum_base_price"),
            sum(col("l_extendedprice").multiply(lit(1).minus(col("l_discount")))).as("sum_disc_price"),
            sum(col("l_extendedprice").multiply(lit(1).minus(col("l_discount"))).multiply(lit(1).plus(col("l_tax"))))
                .as("sum_charge"),
            avg("l_quantity").as("avg_qty"), avg("l_extendedprice").as("avg_price"), avg("l_discount").as("avg_disc"),
            count("*").as("count_order"))
        .orderBy("l_returnflag", "l_linestatus");
    List<String> expected = duckdb("SELECT l_returnflag, l_linestatus, sum(l_quantity), sum(l_extendedprice),"
        + " sum(l_extendedprice * (1 - l_discount)), sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)),"
        + " round(avg(l_quantity), 6)::DECIMAL(38,6), round(avg(l_extendedprice), 6)::DECIMAL(38,6),"
        + " round(avg(l_discount), 6)::DECIMAL(38,6), count(*) FROM lineitem WHERE l_shipdate <= DATE '1998-09-02'"
        + " GROUP BY ALL ORDER BY ALL");
    assertThat(rows(q1)).hasSize(6).isEqualTo(expected);

    String sql = scan(q1).sql();
    assertThat(sql).contains("GROUP BY \"l_returnflag\", \"l_linestatus\"",
        "CAST(sum(CAST((CAST(\"l_extendedprice\" AS DECIMAL(38,2)) * CAST(CAST((CAST(CAST('1' AS DECIMAL(1,0))"
            + " AS DECIMAL(38,0)) - CAST(\"l_discount\" AS DECIMAL(38,2))) AS DECIMAL(16,2)) AS DECIMAL(38,2)))"
            + " AS DECIMAL(32,4))) AS DECIMAL(38,4))", "count(*)",
        "(\"l_shipdate\" <= DATE '1998-09-02')");
    // The scan returns the 6 groups; Spark divides SUM by COUNT for AVG and sorts 6 rows.
    // (AVG's SUM of l_quantity is the SUM already asked for: 9 aggregates, not 10)
    assertThat(scan(q1).readSchema().size()).isEqualTo(2 + 4 + 3 + 1 + 1);
    assertThat(explain(q1)).contains("(\"l_shipdate\" <= DATE '1998-09-02')")
        .contains("pushedAggregate=[").doesNotContain("10471");
  }

  @Test
  void tpchQ6PushesArithmeticInsideTheSum() throws SQLException {
    Dataset<Row> q6 = lineitem()
        .filter(col("l_shipdate").geq(lit(LocalDate.parse("1994-01-01")))
            .and(col("l_shipdate").lt(lit(LocalDate.parse("1995-01-01"))))
            .and(col("l_discount").between(new BigDecimal("0.05"), new BigDecimal("0.07")))
            .and(col("l_quantity").lt(24)))
        .agg(sum(col("l_extendedprice").multiply(col("l_discount"))).as("revenue"));
    assertThat(rows(q6)).isEqualTo(duckdb("SELECT sum(l_extendedprice * l_discount) FROM lineitem"
        + " WHERE l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01'"
        + " AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24"));
    assertThat(scan(q6).readSchema().size()).isEqualTo(1);
    assertThat(scan(q6).sql()).contains("sum(CAST((CAST(\"l_extendedprice\" AS DECIMAL(38,2))"
        + " * CAST(\"l_discount\" AS DECIMAL(38,2))) AS DECIMAL(31,4)))");
  }

  @Test
  void groupKeysMayBeExpressionsAndTopNRunsOverTheAggregate() throws SQLException {
    Dataset<Row> df = lineitem()
        .groupBy(when(col("l_quantity").gt(25), lit("big")).otherwise(lit("small")).as("size"), col("l_shipmode"))
        .agg(sum("l_quantity").as("qty"), min("l_shipdate").as("first"), max("l_orderkey").as("last"),
            countDistinct("l_linenumber").as("lines"))
        .orderBy(desc("qty"))
        .limit(5);
    List<String> expected = duckdb("SELECT CASE WHEN l_quantity > 25 THEN 'big' ELSE 'small' END AS size,"
        + " l_shipmode, sum(l_quantity) AS qty, min(l_shipdate), max(l_orderkey), count(DISTINCT l_linenumber)"
        + " FROM lineitem GROUP BY ALL ORDER BY qty DESC NULLS LAST LIMIT 5");
    assertThat(rows(df)).isEqualTo(expected);
    ThallusScan scan = scan(df);
    assertThat(scan.sql()).contains("count(DISTINCT \"l_linenumber\")", "(CASE WHEN (\"l_quantity\" > ",
        "ORDER BY \"thallus_agg_0\" DESC NULLS LAST", "LIMIT 5");
  }

  @Test
  void nullsSortWhereSparkPutsThem() throws SQLException {
    // Spark sorts ascending with NULLs first, DuckDB with NULLs last: the pushed ORDER BY says which.
    Dataset<Row> df = lineitem().groupBy("l_shipmode").agg(count("*").as("n")).orderBy("l_shipmode").limit(2);
    assertThat(rows(df)).isEqualTo(duckdb("SELECT l_shipmode, count(*) FROM lineitem GROUP BY ALL"
        + " ORDER BY l_shipmode NULLS FIRST LIMIT 2"));
    assertThat(rows(df).get(0)).startsWith("NULL|");
    assertThat(scan(df).sql()).contains("ORDER BY \"l_shipmode\" ASC NULLS FIRST");
  }

  @Test
  void filtersOverArithmeticArePushed() throws SQLException {
    Dataset<Row> df = lineitem().filter(col("l_quantity").multiply(col("l_tax")).gt(new BigDecimal("3.5")))
        .select("l_orderkey").orderBy("l_orderkey");
    assertThat(rows(df)).isNotEmpty().isEqualTo(duckdb("SELECT l_orderkey FROM lineitem"
        + " WHERE l_quantity * l_tax > 3.5 ORDER BY 1"));
    assertThat(scan(df).sql()).contains("(CAST(\"l_quantity\" AS DECIMAL(38,2)) * CAST(\"l_tax\" AS DECIMAL(38,2)))");
  }

  @Test
  void severalPartitionsPushPartialAggregatesAndKeepDistinctInSpark() throws SQLException {
    Dataset<Row> partial = lineitem("partitions", "3").groupBy("l_returnflag")
        .agg(sum(col("l_quantity").multiply(col("l_discount"))).as("s"), avg("l_tax").as("a"))
        .orderBy("l_returnflag");
    assertThat(rows(partial)).isEqualTo(duckdb("SELECT l_returnflag, sum(l_quantity * l_discount),"
        + " round(avg(l_tax), 6)::DECIMAL(38,6) FROM lineitem GROUP BY ALL ORDER BY ALL"));
    assertThat(scan(partial).sql()).contains("GROUP BY \"l_returnflag\"");

    Dataset<Row> distinct = lineitem("partitions", "3").agg(countDistinct("l_linenumber"));
    assertThat(rows(distinct)).containsExactly("7");
    assertThat(scan(distinct).sql()).doesNotContain("DISTINCT").doesNotContain("GROUP BY");
  }

  /** Shapes whose meaning differs between Spark and DuckDB: Spark computes them, with its own answer. */
  @Test
  void refusesWhatDuckDBWouldComputeDifferently() throws SQLException {
    // Division: Spark's decimal quotient has its own scale, DuckDB divides decimals as doubles.
    Dataset<Row> division = lineitem().agg(sum(col("l_extendedprice").divide(col("l_quantity"))).as("s"));
    assertThat(scan(division).sql()).doesNotContain("sum(").doesNotContain("/");
    assertThat(rows(division).get(0)).isNotEqualTo("NULL");

    // Past 38 digits Spark cuts the scale (rounding half up) where DuckDB would keep it: Spark multiplies.
    Dataset<Row> wide = spark.read().format("thallus").option("url", server.url())
        .option("query", "SELECT 1234567890123456789012.1234567891::DECIMAL(32,10) AS a, 1.12345678::DECIMAL(10,8) AS b")
        .load().select(col("a").multiply(col("b")).as("p"));
    BigDecimal product = new BigDecimal("1234567890123456789012.1234567891").multiply(new BigDecimal("1.12345678"));
    assertThat(rows(wide)).containsExactly(product.setScale(13, java.math.RoundingMode.HALF_UP).toPlainString());
    assertThat(wide.schema().fields()[0].dataType().simpleString()).isEqualTo("decimal(38,13)");
    assertThat(scan(wide).sql()).doesNotContain("*");

    // Floating point sums depend on the order of addition.
    Dataset<Row> doubles = spark.read().format("thallus").option("url", server.url())
        .option("query", "SELECT i / 7 AS x FROM range(1000) t(i)").load().agg(sum(col("x").multiply(2)));
    assertThat(scan(doubles).sql()).doesNotContain("sum(");

    // Integer arithmetic outside ANSI mode wraps around in Spark; DuckDB would fail. Spark does not offer it.
    spark.conf().set("spark.sql.ansi.enabled", "false");
    try {
      Dataset<Row> wrapping = lineitem().agg(sum(col("l_big").multiply(col("l_big"))).as("s"));
      assertThat(scan(wrapping).sql()).doesNotContain("\"l_big\" * ");
      assertThat(rows(wrapping)).hasSize(1);
    } finally {
      spark.conf().unset("spark.sql.ansi.enabled");
    }
  }

  @Test
  void aggregatesRunInDuckDBsOwnDecimalTypesFirstAndInSparksAfterAnOverflow() {
    // Q1's products fit DuckDB's 18-digit decimals: the partition runs the narrow SQL, the rows are Spark's.
    Dataset<Row> small = lineitem().agg(sum(col("l_extendedprice").multiply(col("l_discount"))).as("s"));
    ThallusInputPartition partition = Plans.partitions(small).get(0);
    assertThat(partition.exactSqlOrNull()).contains("AS DECIMAL(31,4)");
    assertThat(partition.sql()).contains("sum((\"l_extendedprice\" * \"l_discount\"))")
        .doesNotContain("DECIMAL(31,4)");
    assertThat(explain(small)).contains("runsFirst=[");

    // 9999999999999.99 * 999.99 needs 20 digits at scale 4: DuckDB's DECIMAL(18,4) overflows, Spark's
    // decimal(31,4) does not. The partition runs the exact SQL after the overflow and gives Spark's value.
    Dataset<Row> wide = spark.read().format("thallus").option("url", server.url())
        .option("query", "SELECT 9999999999999.99::DECIMAL(15,2) AS a, 999.99::DECIMAL(15,2) AS b FROM range(3)")
        .load().agg(sum(col("a").multiply(col("b"))).as("s"));
    BigDecimal product = new BigDecimal("9999999999999.99").multiply(new BigDecimal("999.99"));
    assertThat(rows(wide)).containsExactly(product.multiply(BigDecimal.valueOf(3)).stripTrailingZeros()
        .toPlainString());
    assertThat(Plans.partitions(wide).get(0).exactSqlOrNull()).isNotNull();
  }

  @Test
  void anOverflowInPushedArithmeticFailsAsInSparksAnsiMode() {
    Dataset<Row> overflow = lineitem().agg(max(col("l_big").multiply(col("l_big"))).as("m"));
    assertThat(scan(overflow).sql()).contains("(\"l_big\" * \"l_big\")");
    assertThatThrownBy(() -> overflow.collectAsList()).hasMessageContaining("Overflow");
  }

  @Test
  void joinsOfTablesOnOneServerRunInDuckDBWhenSparkPushesJoins() throws SQLException {
    String orders = "SELECT i AS o_orderkey, DATE '1994-01-01' + (i % 700)::INTEGER AS o_orderdate,"
        + " (i % 5)::INTEGER AS o_shippriority, ['BUILDING','MACHINERY'][1 + i % 2] AS o_segment FROM range(30000) t(i)";
    server.execute("CREATE OR REPLACE TABLE li AS SELECT * FROM read_parquet('" + file + "')");
    server.execute("CREATE OR REPLACE TABLE ord AS " + orders);
    spark.read().format("thallus").option("url", server.url()).option("table", "li").load()
        .createOrReplaceTempView("li");
    spark.read().format("thallus").option("url", server.url()).option("table", "ord").load()
        .createOrReplaceTempView("ord");
    String q3 = "SELECT l_orderkey, sum(l_extendedprice * (1 - l_discount)) AS revenue, o_orderdate, o_shippriority"
        + " FROM ord JOIN li ON l_orderkey = o_orderkey WHERE o_segment = 'BUILDING'"
        + " AND o_orderdate < DATE '1995-03-15' AND l_shipdate > DATE '1995-03-15'"
        + " GROUP BY l_orderkey, o_orderdate, o_shippriority ORDER BY revenue DESC, o_orderdate LIMIT 10";
    List<String> expected = duckdb("WITH ord AS (" + orders + ") " + q3.replace(" li ", " lineitem ")
        .replace("ORDER BY revenue DESC, o_orderdate", "ORDER BY revenue DESC, o_orderdate NULLS FIRST"));
    spark.conf().set("spark.sql.optimizer.datasourceV2JoinPushdown", "true");
    try {
      Dataset<Row> pushed = spark.sql(q3);
      assertThat(rows(pushed)).hasSize(10).isEqualTo(expected);
      String sql = scan(pushed).sql();
      assertThat(sql).contains(") AS thallus_left JOIN (", "ON (\"l_orderkey\" = \"o_orderkey\")",
          "GROUP BY", "LIMIT 10");
      assertThat(explain(pushed)).contains("pushedJoin=[JOIN ON");
    } finally {
      spark.conf().unset("spark.sql.optimizer.datasourceV2JoinPushdown");
    }
    // Without Spark's switch the join runs in Spark, with the same rows.
    Dataset<Row> inSpark = spark.sql(q3);
    assertThat(rows(inSpark)).isEqualTo(expected);
    assertThat(explain(inSpark)).doesNotContain("pushedJoin");
  }

  @Test
  void scansReportDuckDBsRowEstimateSoASmallSideIsBroadcast() throws SQLException {
    Dataset<Row> modes = spark.read().format("thallus").option("url", server.url())
        .option("query", "SELECT * FROM (VALUES ('MAIL', 1), ('SHIP', 2)) t(mode, rank)").load();
    assertThat(scan(modes).estimateStatistics().numRows().getAsLong()).isEqualTo(2);
    assertThat(scan(lineitem().filter(col("l_quantity").lt(10))).estimateStatistics().numRows().getAsLong())
        .isBetween(1L, 30_000L);
    Dataset<Row> joined = lineitem().join(modes, col("l_shipmode").equalTo(col("mode")))
        .groupBy("rank").agg(count("*").as("n")).orderBy("rank");
    assertThat(joined.queryExecution().executedPlan().toString()).contains("BroadcastHashJoin");
    assertThat(rows(joined)).isEqualTo(duckdb("SELECT rank, count(*) FROM lineitem JOIN (VALUES ('MAIL', 1),"
        + " ('SHIP', 2)) t(mode, rank) ON l_shipmode = mode GROUP BY rank ORDER BY rank"));
  }

  @Test
  void pushedExpressionsShowAsSqlInExplain() {
    Column revenue = sum(col("l_extendedprice").multiply(lit(1).minus(col("l_discount"))));
    Dataset<Row> df = lineitem().filter(col("l_shipdate").gt(lit(LocalDate.parse("1995-03-15"))))
        .groupBy("l_orderkey").agg(revenue.as("revenue")).orderBy(desc("revenue")).limit(10);
    String plan = explain(df);
    assertThat(plan).contains("DATE '1995-03-15'").contains("pushedTopN=[ORDER BY \"thallus_agg_0\" DESC");
  }
}
