package io.thallus.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Each shape the whole-plan strategy pushes gives Spark's own answer (the same query with the strategy off), on small
 * tables with NULLs, negative decimals, NaN and -0.0; each difference it refuses is shown refused, with the reason,
 * and still Spark's answer.
 */
class WholePlanShapesTest {
  private static TestServer server;
  private static SparkSession spark;

  @BeforeAll
  static void start() {
    server = new TestServer();
    server.execute("CREATE TABLE t (k INTEGER, g VARCHAR, d DECIMAL(10,2), x DOUBLE, n INTEGER, s VARCHAR, day DATE)");
    server.execute("INSERT INTO t VALUES (1, 'a', 10.05, 1.5, 1, 'Apple', DATE '2024-03-01'),"
        + " (2, 'b', -10.05, 2.5, NULL, 'banana', DATE '1999-12-31'), (3, 'a', 7.77, -0.0, 3, 'a_b', NULL),"
        + " (4, NULL, NULL, NULL, 4, NULL, DATE '0001-01-01'),"
        + " (5, 'c', -0.05, 'NaN', 2, 'Straße', DATE '2000-02-29')");
    server.execute("CREATE TABLE u AS SELECT * FROM (VALUES (1, 100), (3, 300), (NULL, 400), (6, 600), (3, 301))"
        + " v(k, w)");
    server.execute("CREATE TABLE v AS SELECT * FROM (VALUES (1), (2)) v(k)");
    // Averages that round: 0.04 / 3, its negative, and 0.01 / 32 = 0.0003125 (a half at Spark's scale of 6).
    server.execute("CREATE TABLE r (g INTEGER, m DECIMAL(20,2))");
    server.execute("INSERT INTO r VALUES (1, 0.01), (1, 0.01), (1, 0.02), (2, -0.01), (2, -0.01), (2, -0.02)");
    server.execute("INSERT INTO r SELECT 3, CASE WHEN i = 0 THEN 0.01 ELSE 0 END FROM range(32) t(i)");
    server.execute("INSERT INTO r SELECT 4, CASE WHEN i = 0 THEN -0.01 ELSE 0 END FROM range(32) t(i)");
    try (java.sql.Connection duckdb = java.sql.DriverManager.getConnection("jdbc:duckdb:");
         java.sql.Statement statement = duckdb.createStatement()) {
      for (String name : List.of("f1", "f2")) {
        statement.execute("COPY (SELECT i AS k, i * 10 AS w FROM range(4) t(i)) TO '"
            + server.dataRoot().resolve(name + ".parquet") + "' (FORMAT parquet)");
      }
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(e);
    }
    spark = TestSpark.session();
    spark.conf().set("spark.sql.catalog.shapes", ThallusCatalog.class.getName());
    spark.conf().set("spark.sql.catalog.shapes.url", server.url());
    spark.conf().set("spark.sql.catalog.shapes4", ThallusCatalog.class.getName());
    spark.conf().set("spark.sql.catalog.shapes4.url", server.url());
    spark.conf().set("spark.sql.catalog.shapes4.partitions", "4");
  }

  @AfterAll
  static void stop() throws Exception {
    server.close();
  }

  @AfterEach
  void off() {
    spark.conf().set(WholePlanStrategy.ENABLED, "false");
    spark.conf().unset("spark.sql.ansi.enabled");
  }

  private static Dataset<Row> sql(String text, boolean whole) {
    spark.conf().set(WholePlanStrategy.ENABLED, Boolean.toString(whole));
    return spark.sql(text.replace("{t}", "shapes.main.t").replace("{u}", "shapes.main.u")
        .replace("{v}", "shapes.main.v"));
  }

  /** Rows as text; sorted unless the query's order is total. */
  private static List<String> rows(Dataset<Row> df, boolean ordered) {
    List<String> rows = new ArrayList<>(WholePlanTest.rows(df));
    if (!ordered) {
      rows.sort(null);
    }
    return rows;
  }

  private static void pushedWithSparksAnswer(String text, boolean ordered) {
    Dataset<Row> pushed = sql(text, true);
    assertThat(WholePlanTest.runsWhole(pushed)).as("runs whole: %s\n%s", text,
        pushed.queryExecution().sparkPlan().treeString()).isTrue();
    List<String> actual = rows(pushed, ordered);
    assertThat(actual).as(text).isEqualTo(rows(sql(text, false), ordered));
  }

  private static void refusedWithSparksAnswer(String text, String reason) {
    Dataset<Row> refused = sql(text, true);
    assertThat(WholePlanStrategy.refusal(refused.queryExecution().optimizedPlan())).as(text).hasValueSatisfying(
        why -> assertThat(why).contains(reason));
    assertThat(WholePlanTest.runsWhole(refused)).as(text).isFalse();
    assertThat(rows(refused, false)).as(text).isEqualTo(rows(sql(text, false), false));
  }

  @Test
  void outerJoinsKeepSparksRows() {
    pushedWithSparksAnswer("SELECT t.k, u.k, u.w FROM {t} FULL JOIN {u} ON t.k = u.k", false);
    pushedWithSparksAnswer("SELECT t.g, u.w FROM {t} RIGHT JOIN {u} ON t.k = u.k AND t.n > 1", false);
    pushedWithSparksAnswer("SELECT t.k, u.w FROM {t} LEFT JOIN {u} ON t.k = u.k WHERE u.w IS NULL OR u.w > 100", false);
    pushedWithSparksAnswer("SELECT t.k, v.k FROM {t} CROSS JOIN {v}", false);
  }

  /** NOT IN over a subquery with a NULL selects nothing in Spark (null-aware anti join); so it does pushed. */
  @Test
  void notInKeepsSparksNullSemantics() {
    pushedWithSparksAnswer("SELECT k FROM {t} WHERE k NOT IN (SELECT k FROM {u})", false);
    assertThat(rows(sql("SELECT k FROM {t} WHERE k NOT IN (SELECT k FROM {u})", true), false)).isEmpty();
    pushedWithSparksAnswer("SELECT k FROM {t} WHERE n NOT IN (SELECT k FROM {v})", false);
    pushedWithSparksAnswer("SELECT k FROM {t} WHERE k IN (SELECT k FROM {u})", false);
    pushedWithSparksAnswer("SELECT k FROM {t} WHERE NOT EXISTS (SELECT 1 FROM {u} WHERE u.k = t.k AND u.w > 300)",
        false);
  }

  @Test
  void existenceJoinsUnionsAndScalarSubqueries() {
    pushedWithSparksAnswer("SELECT k FROM {t} WHERE g = 'c' OR EXISTS (SELECT 1 FROM {u} WHERE u.k = t.k)", false);
    pushedWithSparksAnswer("SELECT k FROM {t} UNION SELECT k FROM {u}", false);
    pushedWithSparksAnswer("SELECT k, g FROM {t} UNION ALL SELECT w, 'u' FROM {u}", false);
    pushedWithSparksAnswer("SELECT g, sum(d) FROM {t} GROUP BY g HAVING sum(d) > (SELECT min(d) FROM {t})", false);
    pushedWithSparksAnswer("SELECT k, (SELECT max(w) FROM {u}) - k FROM {t}", false);
    // Correlated on an inequality: Spark decorrelates it into a join with an aggregate, which is pushed.
    pushedWithSparksAnswer("SELECT k FROM {t} WHERE n > (SELECT max(k) FROM {u} WHERE u.w > t.k * 100)", false);
  }

  /** Spark's decimal types and half-up rounding (away from zero for negatives) in division and AVG. */
  @Test
  void decimalArithmeticHasSparksTypesAndRounding() {
    pushedWithSparksAnswer("SELECT t.k, t.d / 3, t.d / 7.00, t.d * 1.005, t.d / CAST(u.w AS DECIMAL(5,0)),"
        + " t.d - u.w FROM {t} JOIN {u} ON t.k = u.k", false);
    pushedWithSparksAnswer("SELECT g, avg(CAST(d AS DECIMAL(20,2))), sum(d), count(n), count(*), min(s), max(s)"
        + " FROM {t} CROSS JOIN {v} GROUP BY g", false);
    pushedWithSparksAnswer("SELECT a.k, b.k, a.d / b.d, b.d / a.d FROM {t} a CROSS JOIN {t} b WHERE a.d <> 0"
        + " AND b.d <> 0", false);
    pushedWithSparksAnswer("SELECT r.g, avg(r.m), sum(r.m) / 3, sum(r.m) / 32, min(r.m) / 7 FROM shapes.main.r"
        + " JOIN {v} ON v.k = 1 GROUP BY r.g", false);
    assertThat(rows(sql("SELECT r.g, avg(r.m) FROM shapes.main.r JOIN {v} ON v.k = 1 GROUP BY r.g", true), false))
        .containsExactly("[1,0.013333]", "[2,-0.013333]", "[3,0.000313]", "[4,-0.000313]");
    pushedWithSparksAnswer("SELECT g, count(DISTINCT n) FROM {t} CROSS JOIN {v} GROUP BY g", false);
    pushedWithSparksAnswer("SELECT g, sum(d) FILTER (WHERE n > 1) FROM {t} CROSS JOIN {v} GROUP BY g", false);
    Dataset<Row> typed = sql("SELECT t.d / 3 AS q, avg(t.d) OVER () AS a FROM {t}", false);
    assertThat(sql("SELECT t.d / 3 AS q FROM {t} JOIN {v} ON t.k = v.k", true).schema().apply("q").dataType())
        .isEqualTo(typed.schema().apply("q").dataType());
  }

  /** ORDER BY keeps Spark's NULL placement (first ascending, last descending) and the limit cuts after it. */
  @Test
  void sortsPlaceNullsAsSparkDoes() {
    pushedWithSparksAnswer("SELECT t.g, u.w FROM {t} LEFT JOIN {u} ON t.k = u.k ORDER BY t.g DESC, u.w LIMIT 4", true);
    pushedWithSparksAnswer("SELECT t.g, u.w FROM {t} LEFT JOIN {u} ON t.k = u.k ORDER BY t.g, u.w DESC", true);
    pushedWithSparksAnswer("SELECT t.k FROM {t} JOIN {v} ON t.k >= v.k ORDER BY t.k DESC, v.k LIMIT 3", true);
  }

  @Test
  void windowFunctionsGiveSparksValues() {
    pushedWithSparksAnswer("SELECT t.k, v.k, row_number() OVER (PARTITION BY g ORDER BY t.k, v.k),"
        + " rank() OVER (ORDER BY d DESC), dense_rank() OVER (PARTITION BY v.k ORDER BY g),"
        + " sum(d) OVER (PARTITION BY g ORDER BY t.k), count(*) OVER (),"
        + " min(s) OVER (ORDER BY t.k, v.k ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING),"
        + " avg(CAST(d AS DECIMAL(20,2))) OVER (PARTITION BY v.k), sum(n) OVER (PARTITION BY g)"
        + " FROM {t} JOIN {v} ON t.k >= v.k", false);
  }

  /**
   * A catalog's {@code partitions} splits scans; a pushed plan is read whole, so its order and limit hold. (Table t
   * has a column named g, which the server's row-range description once took for its own GROUP BY alias.)
   */
  @Test
  void aPushedPlanIsReadInOneStreamWhateverTheCatalogsPartitions() {
    String text = "SELECT t.g, u.w FROM shapes4.main.t LEFT JOIN shapes4.main.u ON t.k = u.k ORDER BY t.g DESC, u.w";
    Dataset<Row> pushed = sql(text, true);
    assertThat(WholePlanTest.runsWhole(pushed)).isTrue();
    assertThat(pushed.rdd().getNumPartitions()).isEqualTo(1);
    assertThat(rows(pushed, true)).isEqualTo(rows(sql(text, false), true));
  }

  @Test
  void functionsGiveSparksValues() {
    pushedWithSparksAnswer("SELECT t.k, year(day), month(day), quarter(day), dayofmonth(day), substring(s, 2, 3),"
        + " CASE WHEN n > 1 THEN 'big' WHEN n IS NULL THEN NULL ELSE 'small' END, coalesce(n, -1), s LIKE '%an%',"
        + " s LIKE 'a_b', startswith(s, 'b'), s IN ('Apple', 'a_b'), if(n > 2, d, -d)"
        + " FROM {t} LEFT JOIN {v} ON t.k = v.k", false);
  }

  /** ANSI mode: an overflow fails in DuckDB as in Spark (and a zero divisor too), never a wrapped value. */
  @Test
  void overflowAndZeroDivisorFailAsInSpark() {
    String overflow = "SELECT t.k * 2000000000 FROM {t} JOIN {v} ON t.k = v.k";
    assertThat(WholePlanTest.runsWhole(sql(overflow, true))).isTrue();
    // The same SQL in range runs and answers as Spark does, so the failure below is the overflow, not bad SQL.
    pushedWithSparksAnswer("SELECT t.k * 2 FROM {t} JOIN {v} ON t.k = v.k", false);
    // The server says only that DuckDB stopped the statement: an error, as in Spark, with less detail.
    assertThatThrownBy(() -> sql(overflow, true).collectAsList()).hasStackTraceContaining("DuckDB");
    assertThatThrownBy(() -> sql(overflow, false).collectAsList()).hasStackTraceContaining("ARITHMETIC_OVERFLOW");
    String zero = "SELECT t.d / (u.w - u.w) FROM {t} JOIN {u} ON t.k = u.k";
    assertThat(WholePlanTest.runsWhole(sql(zero, true))).isTrue();
    pushedWithSparksAnswer("SELECT t.d / (u.w - u.w + 1) FROM {t} JOIN {u} ON t.k = u.k", false);
    assertThatThrownBy(() -> sql(zero, true).collectAsList()).hasStackTraceContaining("DuckDB");
    assertThatThrownBy(() -> sql(zero, false).collectAsList()).hasStackTraceContaining("DIVIDE_BY_ZERO");
  }

  @Test
  void whatDiffersStaysInSpark() {
    spark.conf().set("spark.sql.ansi.enabled", "false");
    refusedWithSparksAnswer("SELECT t.k + u.w FROM {t} JOIN {u} ON t.k = u.k", "ANSI");
    refusedWithSparksAnswer("SELECT g, sum(d) FROM {t} JOIN {v} ON t.k = v.k GROUP BY g", "ANSI");
    spark.conf().unset("spark.sql.ansi.enabled");
    refusedWithSparksAnswer("SELECT g, sum(x) FROM {t} JOIN {v} ON t.k >= v.k GROUP BY g", "order of addition");
    // Spark computes AVG of a decimal of precision <= 11 in DOUBLE (DecimalAggregates) and casts back.
    refusedWithSparksAnswer("SELECT g, avg(d) FROM {t} JOIN {v} ON t.k >= v.k GROUP BY g", "cast from double");
    refusedWithSparksAnswer("SELECT g, avg(n) FROM {t} JOIN {v} ON t.k >= v.k GROUP BY g", "DOUBLE");
    refusedWithSparksAnswer("SELECT t.x FROM {t} JOIN {v} ON t.k >= v.k ORDER BY t.x", "NaN");
    refusedWithSparksAnswer("SELECT t.k FROM {t} JOIN {v} ON t.x > v.k", "NaN");
    refusedWithSparksAnswer("SELECT g, max(x) FROM {t} JOIN {v} ON t.k >= v.k GROUP BY g", "NaN");
    refusedWithSparksAnswer("SELECT t.x, count(*) FROM {t} JOIN {v} ON t.k >= v.k GROUP BY t.x", "normalises");
    refusedWithSparksAnswer("SELECT DISTINCT t.x FROM {t} JOIN {v} ON t.k >= v.k", "normalises");
    refusedWithSparksAnswer("SELECT g, count(DISTINCT x) FROM {t} JOIN {v} ON t.k >= v.k GROUP BY g", "normalises");
    refusedWithSparksAnswer("SELECT t.k, lag(t.k) OVER (PARTITION BY g ORDER BY t.k) FROM {t} JOIN {v} ON t.k >= v.k",
        "lag");
    refusedWithSparksAnswer("SELECT t.k, sum(t.k) OVER (ORDER BY t.k RANGE BETWEEN 1 PRECEDING AND CURRENT ROW)"
        + " FROM {t} JOIN {v} ON t.k >= v.k", "RANGE");
    refusedWithSparksAnswer("SELECT t.k FROM {t} JOIN {v} ON t.k >= v.k WHERE s COLLATE UTF8_LCASE = 'apple'",
        "collation");
    refusedWithSparksAnswer("SELECT t.k FROM {t} JOIN {v} ON t.k >= v.k WHERE s LIKE 'a\\\\_%'", "escape");
    refusedWithSparksAnswer("SELECT substring(s, 0, 2) FROM {t} JOIN {v} ON t.k >= v.k", "substring");
    refusedWithSparksAnswer("SELECT upper(s) FROM {t} JOIN {v} ON t.k >= v.k", "upper");
    refusedWithSparksAnswer("SELECT CAST(d AS DOUBLE) FROM {t} JOIN {v} ON t.k >= v.k", "cast");
  }

  /** Datasets of files join each other and the server's tables in one request, each bound under a view. */
  @Test
  void fileDatasetsJoinTablesAndEachOther() {
    pushedWithSparksAnswer("SELECT f.k, f.w, t.g FROM shapes.files.`f1.parquet` f JOIN {t} ON f.k = t.k", false);
    pushedWithSparksAnswer("SELECT a.k, b.w, count(*) FROM shapes.files.`f1.parquet` a JOIN shapes.files.`f2.parquet` b"
        + " ON a.k <= b.k GROUP BY a.k, b.w", false);
  }

  @Test
  void explainShowsThePushedSqlAndTheConfSwitchesItOff() {
    String text = "SELECT g, count(*) FROM {t} JOIN {u} ON t.k = u.k GROUP BY g ORDER BY g";
    String explain = sql(text, true).queryExecution().explainString(
        org.apache.spark.sql.execution.SimpleMode$.MODULE$);
    assertThat(explain).contains("ThallusWholePlan[", "operators=[Sort, Aggregate, Project, Join",
        "JOIN", "GROUP BY", "ORDER BY", "ASC NULLS FIRST");
    assertThat(WholePlanTest.runsWhole(sql(text, false))).isFalse();
  }
}
