package io.thallus.harness;

import io.thallus.Location;
import io.thallus.ThallusClient;
import io.thallus.ThallusStream;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.SparkPlan;
import scala.jdk.javaapi.CollectionConverters;

/**
 * All 22 TPC-H queries (the texts the whole-plan tests run, thallus-spark/src/test/resources/tpch) in Spark SQL,
 * local[2], four ways side by side: Spark's Parquet reader over the files; the thallus catalog over the same rows
 * loaded into the server's database with whole-plan pushdown on ({@code io.thallus.spark.ThallusExtensions}); the
 * same catalog with it off (the scan's own pushdown, joins of two tables included); and whole-plan pushdown over the
 * Parquet files themselves (the catalog's files namespace). Every answer is compared with
 * the Parquet path's; each query says whether it ran whole in DuckDB (one Thallus scan in Spark's plan).
 *
 * <pre>
 * harness/spark-tpch-bench.sh --whole-plan [--sf 1] [--runs 3] [--queries thallus-spark/src/test/resources/tpch]
 * </pre>
 */
public final class SparkTpchWholePlanMain {
  private static final List<String> TABLES = List.of("region", "nation", "supplier", "part", "partsupp", "customer",
      "orders", "lineitem");
  private static final List<String> PATHS = List.of("spark parquet", "thallus whole plan", "thallus scan pushdown",
      "thallus whole plan, files");

  private SparkTpchWholePlanMain() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> options = SparkRuns.options(args);
    Path data = Path.of(options.getOrDefault("data", "harness/target/tpch-sf1")).toAbsolutePath();
    Path queries = Path.of(options.getOrDefault("queries", "thallus-spark/src/test/resources/tpch"));
    int runs = Integer.parseInt(options.getOrDefault("runs", "3"));
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0),
                 DuckDBEngine.builder().filesUnder(data).build()).dataRoot(data).build().start()) {
      Location location = server.getLocation();
      try (ThallusClient client = ThallusClient.connect(allocator, location)) {
        for (String table : TABLES) {
          try (ThallusStream stream = client.query("CREATE OR REPLACE TABLE " + table + " AS SELECT * FROM"
              + " read_parquet('" + data.resolve(table + ".parquet") + "')")) {
            while (stream.hasNext()) {
              stream.next().close();
            }
          }
        }
      }
      SparkSession spark = SparkSession.builder().master("local[2]").appName("thallus-tpch-whole-plan")
          .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
          .config("spark.driver.bindAddress", "127.0.0.1").config("spark.sql.shuffle.partitions", "2")
          .config("spark.sql.extensions", "io.thallus.spark.ThallusExtensions")
          .config("spark.sql.optimizer.datasourceV2JoinPushdown", "true")
          .config("spark.sql.catalog.thallus", "io.thallus.spark.ThallusCatalog")
          .config("spark.sql.catalog.thallus.url", location.toString())
          .getOrCreate();

      Map<Integer, Map<String, List<Double>>> times = new LinkedHashMap<>();
      Map<Integer, List<String>> expected = new LinkedHashMap<>();
      Map<Integer, Boolean> whole = new LinkedHashMap<>();
      Map<Integer, Boolean> wholeOverFiles = new LinkedHashMap<>();
      for (int run = 0; run <= runs; run++) { // run 0 warms up and is not counted
        for (int q = 1; q <= 22; q++) {
          String text = Files.readString(queries.resolve("q" + q + ".sql"));
          for (String path : PATHS) {
            use(spark, path, data);
            long t0 = System.nanoTime();
            Dataset<Row> df = spark.sql(text);
            List<String> rows = SparkRuns.text(df.collectAsList());
            double seconds = (System.nanoTime() - t0) / 1e9;
            List<String> first = expected.putIfAbsent(q, rows);
            if (first != null && !first.equals(rows)) {
              throw new AssertionError(path + " answered Q" + q + " with " + rows + ", Spark's Parquet path with "
                  + first);
            }
            if (path.equals("thallus whole plan")) {
              whole.put(q, oneScan(df.queryExecution().sparkPlan()));
            } else if (path.equals("thallus whole plan, files")) {
              wholeOverFiles.put(q, oneScan(df.queryExecution().sparkPlan()));
            }
            if (run > 0) {
              times.computeIfAbsent(q, k -> new LinkedHashMap<>()).computeIfAbsent(path, k -> new ArrayList<>())
                  .add(seconds);
            }
          }
        }
      }
      System.out.printf(Locale.ROOT, "%nTPC-H on %s, Spark local[2], median of %d runs (rows equal on every path)%n",
          data.getFileName(), runs);
      System.out.println("| query | " + String.join(" s | ", PATHS) + " s | whole in DuckDB (tables, files) |"
          + " whole plan vs parquet | whole plan vs scan pushdown | files vs parquet |");
      System.out.println("|---|---|---|---|---|---|---|---|---|");
      double logSum = 0;
      double filesLogSum = 0;
      int wholeCount = 0;
      for (Map.Entry<Integer, Map<String, List<Double>>> query : times.entrySet()) {
        double parquet = SparkRuns.median(query.getValue().get(PATHS.get(0)));
        double pushed = SparkRuns.median(query.getValue().get(PATHS.get(1)));
        double scan = SparkRuns.median(query.getValue().get(PATHS.get(2)));
        boolean isWhole = whole.get(query.getKey());
        wholeCount += isWhole ? 1 : 0;
        double files = SparkRuns.median(query.getValue().get(PATHS.get(3)));
        logSum += Math.log(parquet / pushed);
        filesLogSum += Math.log(parquet / files);
        System.out.printf(Locale.ROOT, "| Q%d | %.2f | %.2f | %.2f | %.2f | %s, %s | %.2fx | %.2fx | %.2fx |%n",
            query.getKey(), parquet, pushed, scan, files, isWhole ? "yes" : "no",
            wholeOverFiles.get(query.getKey()) ? "yes" : "no", parquet / pushed, scan / pushed, parquet / files);
      }
      long wholeFiles = wholeOverFiles.values().stream().filter(Boolean::booleanValue).count();
      System.out.printf(Locale.ROOT, "%n%d of %d whole in DuckDB over tables, %d over files; geometric-mean speed-up of"
          + " the whole plan over Spark's Parquet reader: %.2fx over tables, %.2fx over files%n", wholeCount,
          times.size(), wholeFiles, Math.exp(logSum / times.size()), Math.exp(filesLogSum / times.size()));
      spark.stop();
    }
  }

  /** Points the query's table names at the path's tables. Temporary views shadow the catalog's, so they go first. */
  private static void use(SparkSession spark, String path, Path data) {
    for (String table : TABLES) {
      spark.catalog().dropTempView(table);
    }
    if (path.equals("spark parquet")) {
      spark.catalog().setCurrentCatalog("spark_catalog");
      for (String table : TABLES) {
        spark.read().parquet(data.resolve(table + ".parquet").toString()).createOrReplaceTempView(table);
      }
    } else if (path.equals("thallus whole plan, files")) {
      spark.conf().set("spark.thallus.wholePlan.enabled", "true");
      spark.catalog().setCurrentCatalog("spark_catalog");
      for (String table : TABLES) {
        spark.sql("CREATE OR REPLACE TEMPORARY VIEW " + table + " AS SELECT * FROM thallus.files.`" + table
            + ".parquet`");
      }
    } else {
      spark.conf().set("spark.thallus.wholePlan.enabled", Boolean.toString(path.equals("thallus whole plan")));
      spark.catalog().setCurrentCatalog("thallus");
      spark.catalog().setCurrentDatabase("main");
    }
  }

  /** One scan in the plan and nothing computed above it but projections. */
  private static boolean oneScan(SparkPlan plan) {
    List<SparkPlan> nodes = new ArrayList<>();
    collect(plan, nodes);
    return nodes.stream().filter(n -> n != null && n.nodeName().startsWith("BatchScan")).count() == 1
        && nodes.stream().allMatch(n -> n != null
            && (n.nodeName().startsWith("BatchScan") || n.nodeName().equals("Project")));
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
}
