package io.thallus.spark;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.ProjectExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Whole-plan pushdown over TPC-H (scale factor 0.01) through the catalog, over the server's database tables and over
 * the same rows as Parquet files (the catalog's files namespace): all 22 queries' answers equal Spark's own over the
 * Parquet files read by Spark, and the queries claimed run whole in DuckDB (one
 * Thallus scan and nothing of Spark's above it but projections that only rename columns).
 */
class WholePlanTest {
  /** The queries that run as one DuckDB query. */
  private static final List<Integer> WHOLE = List.of(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18,
      19, 20, 21, 22);
  private static TestServer server;
  private static SparkSession spark;
  private static Path parquet;

  @BeforeAll
  static void start() {
    server = new TestServer();
    parquet = server.dataRoot().resolve("tpch");
    TpchData.writeParquet(parquet);
    for (String table : TpchData.TABLES) {
      server.execute("CREATE TABLE " + table + " AS SELECT * FROM read_parquet('" + parquet.resolve(table + ".parquet")
          + "')");
    }
    spark = TestSpark.session();
    spark.conf().set("spark.sql.catalog.tpch", ThallusCatalog.class.getName());
    spark.conf().set("spark.sql.catalog.tpch.url", server.url());
  }

  @AfterAll
  static void stop() throws Exception {
    spark.conf().set(WholePlanStrategy.ENABLED, "false");
    server.close();
  }

  @Test
  void everyTpchQueryGivesSparksAnswerAndRunsWholeInDuckDB() {
    String catalog = spark.catalog().currentCatalog();
    Map<Integer, List<String>> tables;
    Map<Integer, List<String>> files;
    List<Integer> wholeOverTables = new ArrayList<>();
    List<Integer> wholeOverFiles = new ArrayList<>();
    Map<Integer, String> notWhole = new LinkedHashMap<>();
    spark.conf().set(WholePlanStrategy.ENABLED, "true");
    try {
      // The server's database tables, through the catalog.
      spark.catalog().setCurrentCatalog("tpch");
      spark.catalog().setCurrentDatabase("main");
      tables = answers(wholeOverTables, notWhole);
      // The same rows as Parquet files under the server's data root, through the catalog's files namespace.
      spark.catalog().setCurrentCatalog(catalog);
      for (String table : TpchData.TABLES) {
        spark.sql("CREATE OR REPLACE TEMPORARY VIEW " + table + " AS SELECT * FROM tpch.files.`tpch/" + table
            + ".parquet`");
      }
      files = answers(wholeOverFiles, notWhole);
    } finally {
      spark.conf().set(WholePlanStrategy.ENABLED, "false");
      spark.catalog().setCurrentCatalog(catalog);
    }
    Map<Integer, String> wrong = new LinkedHashMap<>();
    List<Integer> empty = new ArrayList<>();
    try {
      for (String table : TpchData.TABLES) {
        spark.read().parquet(parquet.resolve(table + ".parquet").toString()).createOrReplaceTempView(table);
      }
      for (int q = 1; q <= 22; q++) {
        List<String> expected = rows(spark.sql(TpchData.query(q)));
        if (!expected.equals(tables.get(q)) || !expected.equals(files.get(q))) {
          wrong.put(q, "Spark " + expected + "\nover tables " + tables.get(q) + "\nover files " + files.get(q));
        }
        if (expected.isEmpty()) {
          empty.add(q);
        }
      }
    } finally {
      for (String table : TpchData.TABLES) {
        spark.catalog().dropTempView(table);
      }
    }
    assertThat(wrong).as("queries whose answer differs from Spark's").isEmpty();
    assertThat(empty).as("queries with no rows (the data should select some for each)").isEmpty();
    assertThat(wholeOverTables).as("queries run whole in DuckDB over tables; the others: %s", notWhole)
        .containsExactlyElementsOf(WHOLE);
    assertThat(wholeOverFiles).as("queries run whole in DuckDB over files; the others: %s", notWhole)
        .containsExactlyElementsOf(WHOLE);
  }

  /** The 22 queries' rows as the session now resolves their tables; adds each query run whole to {@code whole}. */
  private static Map<Integer, List<String>> answers(List<Integer> whole, Map<Integer, String> notWhole) {
    Map<Integer, List<String>> answers = new LinkedHashMap<>();
    for (int q = 1; q <= 22; q++) {
      Dataset<Row> df = spark.sql(TpchData.query(q));
      if (runsWhole(df)) {
        whole.add(q);
      } else {
        notWhole.put(q, WholePlanStrategy.refusal(df.queryExecution().optimizedPlan()).orElse("?") + "\n"
            + df.queryExecution().sparkPlan().treeString());
      }
      answers.put(q, rows(df));
    }
    return answers;
  }

  /** One Thallus scan with nothing of Spark's above it but projections that compute nothing. */
  static boolean runsWhole(Dataset<?> df) {
    List<SparkPlan> nodes = new ArrayList<>();
    collect(df.queryExecution().sparkPlan(), nodes);
    long scans = nodes.stream().filter(n -> n instanceof BatchScanExec).count();
    return scans == 1 && nodes.stream().allMatch(n -> n instanceof BatchScanExec
        || n instanceof ProjectExec project && renamesOnly(project));
  }

  /** A projection that computes nothing: columns, perhaps renamed (as after a scan's pushed aggregate). */
  private static boolean renamesOnly(ProjectExec project) {
    for (org.apache.spark.sql.catalyst.expressions.NamedExpression e
        : CollectionConverters.asJava(project.projectList())) {
      org.apache.spark.sql.catalyst.expressions.Expression value =
          (org.apache.spark.sql.catalyst.expressions.Expression) e;
      while (value instanceof org.apache.spark.sql.catalyst.expressions.Alias alias) {
        value = alias.child();
      }
      if (!(value instanceof org.apache.spark.sql.catalyst.expressions.Attribute)) {
        return false;
      }
    }
    return true;
  }

  private static void collect(SparkPlan plan, List<SparkPlan> nodes) {
    nodes.add(plan);
    for (SparkPlan child : CollectionConverters.asJava(plan.children())) {
      collect(child, nodes);
    }
    // Before preparation a subquery is still a logical plan (Spark's own work all the same): counted as such.
    for (Object subquery : CollectionConverters.asJava(plan.subqueries())) {
      if (subquery instanceof SparkPlan physical) {
        collect(physical, nodes);
      } else {
        nodes.add(null);
      }
    }
  }

  /** The rows as text, in the order the query gives them (TPC-H's orders are total, ties aside). */
  static List<String> rows(Dataset<Row> df) {
    List<String> rows = new ArrayList<>();
    for (Row row : df.collectAsList()) {
      rows.add(row.toString());
    }
    return rows;
  }
}
