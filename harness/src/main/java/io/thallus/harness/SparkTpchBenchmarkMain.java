package io.thallus.harness;

import io.thallus.Location;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * TPC-H Q1, Q3 and Q6 in Spark SQL over five sources of the same data, side by side in one JVM (local[2]): the
 * thallus format with its defaults on the Parquet files (the server's DuckDB runs what is pushed), the thallus
 * catalog on the same rows loaded into the server's database with Spark's join pushdown on (joins of two tables of
 * one server run in DuckDB; datasets are joined in Spark), Spark's own Parquet reader, and Spark's JDBC source through jdbc:thallus and through DuckDB's JDBC driver in process (each JDBC read
 * split in 2 partitions by key). Every path's rows are compared with the first path's. Then a write: lineitem read
 * by Spark's Parquet reader, written into the server's database through the thallus catalog
 * ({@code writeTo(...).createOrReplace()}) and through Spark's JDBC writer on jdbc:thallus; row counts checked.
 *
 * <pre>
 * harness/spark-tpch-bench.sh [--sf 1] [--runs 2] [--data DIR]
 * </pre>
 */
public final class SparkTpchBenchmarkMain {
  private SparkTpchBenchmarkMain() {}

  /** TPC-H Q1 and Q6 over {@code lineitem}, as the other Spark benchmarks run them too. */
  static final String Q1 = """
      SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty, sum(l_extendedprice) AS sum_base_price,
        sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price,
        sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge, avg(l_quantity) AS avg_qty,
        avg(l_extendedprice) AS avg_price, avg(l_discount) AS avg_disc, count(*) AS count_order
      FROM lineitem WHERE l_shipdate <= date '1998-12-01' - interval '90' day
      GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus""";
  private static final String Q3 = """
      SELECT l_orderkey, sum(l_extendedprice * (1 - l_discount)) AS revenue, o_orderdate, o_shippriority
      FROM customer, orders, lineitem
      WHERE c_mktsegment = 'BUILDING' AND c_custkey = o_custkey AND l_orderkey = o_orderkey
        AND o_orderdate < date '1995-03-15' AND l_shipdate > date '1995-03-15'
      GROUP BY l_orderkey, o_orderdate, o_shippriority ORDER BY revenue DESC, o_orderdate LIMIT 10""";
  static final String Q6 = """
      SELECT sum(l_extendedprice * l_discount) AS revenue FROM lineitem
      WHERE l_shipdate >= date '1994-01-01' AND l_shipdate < date '1994-01-01' + interval '1' year
        AND l_discount BETWEEN 0.06 - 0.01 AND 0.06 + 0.01 AND l_quantity < 24""";
  private static final Map<String, String> QUERIES = new LinkedHashMap<>();

  static {
    QUERIES.put("Q1", Q1);
    QUERIES.put("Q3", Q3);
    QUERIES.put("Q6", Q6);
  }

  private static final Map<String, String> KEYS = Map.of("lineitem", "l_orderkey", "orders", "o_orderkey",
      "customer", "c_custkey");

  public static void main(String[] args) throws Exception {
    Map<String, String> options = SparkRuns.options(args);
    Path data = Path.of(options.getOrDefault("data", "harness/target/tpch-sf1")).toAbsolutePath();
    int runs = Integer.parseInt(options.getOrDefault("runs", "2"));

    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0),
                 DuckDBEngine.builder().filesUnder(data).build()).dataRoot(data)
             .build().start()) {
      Location location = server.getLocation();
      String thallusJdbc = "jdbc:thallus://127.0.0.1:" + location.port() + "?transport=tcp";
      SparkSession spark = SparkSession.builder().master("local[2]").appName("thallus-tpch-bench")
          .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
          .config("spark.driver.bindAddress", "127.0.0.1").config("spark.sql.shuffle.partitions", "2")
          .config("spark.sql.catalog.thallus", "io.thallus.spark.ThallusCatalog")
          .config("spark.sql.catalog.thallus.url", location.toString())
          .getOrCreate();
      Map<String, long[]> bounds = bounds(data);

      Map<String, Function<String, Dataset<Row>>> sources = new LinkedHashMap<>();
      sources.put("thallus (defaults)", table -> spark.read().format("thallus").option("url", location.toString())
          .option("dataset", table + ".parquet").load());
      // The same files loaded into the server's database once, read through the catalog with join pushdown on.
      for (String table : KEYS.keySet()) {
        try (io.thallus.ThallusClient client = io.thallus.ThallusClient.connect(allocator, location);
             io.thallus.ThallusStream stream = client.query("CREATE OR REPLACE TABLE " + table
                 + " AS SELECT * FROM read_parquet('" + data.resolve(table + ".parquet") + "')")) {
          while (stream.hasNext()) {
            stream.next().close();
          }
        }
      }
      sources.put("thallus catalog + joins", table -> spark.table("thallus.main." + table));
      sources.put("spark parquet", table -> spark.read().parquet(data.resolve(table + ".parquet").toString()));
      sources.put("spark jdbc (jdbc:thallus)", table -> jdbc(spark, thallusJdbc, "io.thallus.jdbc.ThallusDriver",
          data, table, bounds.get(table)));
      sources.put("spark jdbc (jdbc:duckdb)", table -> jdbc(spark, "jdbc:duckdb:", "org.duckdb.DuckDBDriver", data,
          table, bounds.get(table)));

      Map<String, Map<String, List<Double>>> times = new LinkedHashMap<>();
      Map<String, List<String>> expected = new LinkedHashMap<>();
      for (int run = 0; run <= runs; run++) { // run 0 warms up and is not counted
        for (Map.Entry<String, String> query : QUERIES.entrySet()) {
          for (Map.Entry<String, Function<String, Dataset<Row>>> source : sources.entrySet()) {
            for (String table : KEYS.keySet()) {
              source.getValue().apply(table).createOrReplaceTempView(table);
            }
            spark.conf().set("spark.sql.optimizer.datasourceV2JoinPushdown",
                source.getKey().contains("joins") ? "true" : "false");
            long t0 = System.nanoTime();
            List<String> rows = SparkRuns.text(spark.sql(query.getValue()).collectAsList());
            double seconds = (System.nanoTime() - t0) / 1e9;
            List<String> first = expected.putIfAbsent(query.getKey(), rows);
            if (first != null && !first.equals(rows)) {
              throw new AssertionError(source.getKey() + " answered " + query.getKey() + " with " + rows
                  + ", the first path with " + first);
            }
            if (run > 0) {
              times.computeIfAbsent(query.getKey(), k -> new LinkedHashMap<>())
                  .computeIfAbsent(source.getKey(), k -> new ArrayList<>()).add(seconds);
            }
          }
        }
      }
      System.out.printf(Locale.ROOT, "%nTPC-H on %s, Spark local[2], median of %d runs (rows equal on every path)%n",
          data.getFileName(), runs);
      System.out.println("| query | " + String.join(" s | ", sources.keySet()) + " s | speed-up of each thallus"
          + " path vs parquet | vs jdbc:thallus | vs jdbc:duckdb |");
      System.out.println("|---|" + "---|".repeat(sources.size() + 3));
      for (Map.Entry<String, Map<String, List<Double>>> query : times.entrySet()) {
        StringBuilder line = new StringBuilder("| " + query.getKey() + " |");
        List<Double> medians = new ArrayList<>();
        for (List<Double> values : query.getValue().values()) {
          medians.add(SparkRuns.median(values));
          line.append(String.format(Locale.ROOT, " %.2f |", SparkRuns.median(values)));
        }
        // medians: thallus format, thallus catalog, parquet, jdbc:thallus, jdbc:duckdb
        for (int i = 2; i < medians.size(); i++) {
          line.append(String.format(Locale.ROOT, " %.1fx, %.1fx |", medians.get(i) / medians.get(0),
              medians.get(i) / medians.get(1)));
        }
        System.out.println(line);
      }

      // The write: the same DataFrame into the server's database, through the catalog and through Spark's JDBC writer.
      Dataset<Row> lineitem = spark.read().parquet(data.resolve("lineitem.parquet").toString());
      long rows = lineitem.count();
      Map<String, List<Double>> writes = new LinkedHashMap<>();
      java.util.Properties jdbcProperties = new java.util.Properties();
      jdbcProperties.setProperty("driver", "io.thallus.jdbc.ThallusDriver");
      for (int run = 0; run <= runs; run++) {
        long t0 = System.nanoTime();
        lineitem.writeTo("thallus.main.lineitem_catalog").createOrReplace();
        double catalog = (System.nanoTime() - t0) / 1e9;
        t0 = System.nanoTime();
        lineitem.write().mode("overwrite").jdbc(thallusJdbc, "lineitem_jdbc", jdbcProperties);
        double jdbc = (System.nanoTime() - t0) / 1e9;
        for (String table : List.of("lineitem_catalog", "lineitem_jdbc")) {
          long written = spark.read().format("thallus").option("url", location.toString()).option("table", table)
              .load().count();
          if (written != rows) {
            throw new AssertionError(table + " holds " + written + " rows, expected " + rows);
          }
        }
        if (run > 0) {
          writes.computeIfAbsent("thallus writeTo(...).createOrReplace()", k -> new ArrayList<>()).add(catalog);
          writes.computeIfAbsent("spark jdbc writer (jdbc:thallus)", k -> new ArrayList<>()).add(jdbc);
        }
      }
      System.out.printf(Locale.ROOT, "%nWrite of lineitem (%,d rows) into the server's database, median of %d runs%n",
          rows, runs);
      System.out.println("| path | s | rows/s | vs spark jdbc writer |");
      System.out.println("|---|---|---|---|");
      double jdbcWrite = SparkRuns.median(writes.get("spark jdbc writer (jdbc:thallus)"));
      for (Map.Entry<String, List<Double>> write : writes.entrySet()) {
        double seconds = SparkRuns.median(write.getValue());
        System.out.printf(Locale.ROOT, "| %s | %.2f | %,.0f | %.1fx |%n", write.getKey(), seconds, rows / seconds,
            jdbcWrite / seconds);
      }
      spark.stop();
    }
  }

  private static Dataset<Row> jdbc(SparkSession spark, String url, String driver, Path data, String table,
      long[] bounds) {
    return spark.read().format("jdbc").option("url", url).option("driver", driver)
        .option("dbtable", "(SELECT * FROM read_parquet('" + data.resolve(table + ".parquet") + "')) AS " + table)
        .option("partitionColumn", KEYS.get(table)).option("lowerBound", bounds[0]).option("upperBound", bounds[1])
        .option("numPartitions", 2).option("fetchsize", 65_536).load();
  }

  /** Smallest and largest key of each table, for the JDBC source's partitions. */
  private static Map<String, long[]> bounds(Path data) throws Exception {
    Map<String, long[]> bounds = new LinkedHashMap<>();
    try (Connection connection = DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = connection.createStatement()) {
      for (Map.Entry<String, String> key : KEYS.entrySet()) {
        try (ResultSet rs = statement.executeQuery("SELECT min(" + key.getValue() + "), max(" + key.getValue()
            + ") FROM read_parquet('" + data.resolve(key.getKey() + ".parquet") + "')")) {
          rs.next();
          bounds.put(key.getKey(), new long[] {rs.getLong(1), rs.getLong(2) + 1});
        }
      }
    }
    return bounds;
  }
}
