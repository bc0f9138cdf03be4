package io.thallus.harness;

import io.thallus.Location;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;

/**
 * Times Spark reading one table, side by side in one JVM: thallus over tcp, thallus with the server's choice
 * (shm on the same host), and Spark's own JDBC source, once through DuckDB's JDBC driver on the file and once
 * through Thallus' JDBC driver ({@code jdbc:thallus://}, over tcp) reading the same server. Each path runs {@code count()} and a {@code sum()} of every
 * column, interleaved, and the medians are printed. Aggregate pushdown is off for every path (the rows are moved
 * into Spark); {@code --pushdown} adds a second table with it on, where the server computes the aggregates.
 *
 * <pre>
 * harness/spark-bench.sh [--rows 10000000] [--columns 8] [--runs 5] [--partitions 2] [--pushdown]
 *                        [--jdbc-url jdbc:duckdb:FILE] [--jdbc-driver org.duckdb.DuckDBDriver] [--jdbc-table t]
 *                        [--no-thallus-jdbc]
 * </pre>
 *
 * By default the table is a DuckDB file under a temporary data root: the server attaches it, and the JDBC source
 * reads the same file through DuckDB's JDBC driver in this JVM (read-only). Another JDBC URL reads whatever it
 * points at: give a table with the same rows.
 */
public final class SparkReadBenchmarkMain {
  private SparkReadBenchmarkMain() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> options = parse(args);
    long rows = Long.parseLong(options.getOrDefault("rows", "10000000"));
    int columns = Integer.parseInt(options.getOrDefault("columns", "8"));
    int runs = Integer.parseInt(options.getOrDefault("runs", "5"));
    int partitions = Integer.parseInt(options.getOrDefault("partitions", "2"));
    boolean pushdown = options.containsKey("pushdown");

    Path root = Files.createTempDirectory("thallus-spark-bench");
    Path file = root.resolve("bench.duckdb");
    long started = System.nanoTime();
    List<String> names = new ArrayList<>();
    StringBuilder select = new StringBuilder();
    for (int c = 0; c < columns; c++) {
      names.add("c" + c);
      select.append(c == 0 ? "" : ", ").append(c == 0 ? "i" : "i * " + (c + 1) + " % 1000003").append(" AS c").append(c);
    }
    try (Connection connection = DriverManager.getConnection("jdbc:duckdb:" + file);
         Statement statement = connection.createStatement()) {
      statement.execute("CREATE TABLE t AS SELECT " + select + " FROM range(" + rows + ") r(i)");
    }
    System.out.printf(Locale.ROOT, "table: %,d rows x %d BIGINT in %s (%.1f s to write)%n", rows, columns, file,
        (System.nanoTime() - started) / 1e9);

    String jdbcUrl = options.getOrDefault("jdbc-url", "jdbc:duckdb:" + file);
    String jdbcDriver = options.getOrDefault("jdbc-driver", "org.duckdb.DuckDBDriver");
    String jdbcTable = options.getOrDefault("jdbc-table", "t");

    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0),
                 DuckDBEngine.builder().filesUnder(root).build()).dataRoot(root)
             .build().start()) {
      SparkSession spark = SparkSession.builder().master("local[2]").appName("thallus-spark-bench")
          .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
          .config("spark.driver.bindAddress", "127.0.0.1").config("spark.sql.shuffle.partitions", "2")
          .getOrCreate();
      Location location = server.getLocation();
      String chosen;
      try (io.thallus.ThallusClient probe = io.thallus.ThallusClient.connect(allocator, location)) {
        chosen = probe.transport(); // what thallus:// settles on here, for the table's label
      }
      Map<String, java.util.function.Function<Boolean, Dataset<Row>>> paths = new LinkedHashMap<>();
      paths.put("thallus tcp", push -> thallus(spark, location.withTransport("tcp").toString(), partitions, push));
      paths.put("thallus default (" + chosen + ")",
          push -> thallus(spark, location.toString(), partitions, push));
      paths.put("spark jdbc (" + jdbcUrl.replaceAll("^(jdbc:[a-z]+):.*", "$1") + ")",
          push -> jdbc(spark, jdbcUrl, jdbcDriver, jdbcTable, rows, partitions, push));
      if (!options.containsKey("no-thallus-jdbc")) {
        String thallusJdbc = "jdbc:thallus://127.0.0.1:" + location.port() + "/bench.duckdb?transport=tcp";
        paths.put("spark jdbc (jdbc:thallus, tcp)",
            push -> jdbc(spark, thallusJdbc, "io.thallus.jdbc.ThallusDriver", "t", rows, partitions, push));
      }

      Column[] sums = names.stream().map(functions::sum).toArray(Column[]::new);
      List<Boolean> modes = pushdown ? List.of(false, true) : List.of(false);
      for (boolean push : modes) {
        Map<String, List<Double>> counts = new LinkedHashMap<>();
        Map<String, List<Double>> totals = new LinkedHashMap<>();
        Row expected = null;
        for (int run = 0; run <= runs; run++) { // run 0 warms up every path and is not counted
          for (Map.Entry<String, java.util.function.Function<Boolean, Dataset<Row>>> path : paths.entrySet()) {
            long t0 = System.nanoTime();
            long count = path.getValue().apply(push).count();
            double countSeconds = (System.nanoTime() - t0) / 1e9;
            t0 = System.nanoTime();
            Row sum = path.getValue().apply(push).agg(sums[0], Arrays.copyOfRange(sums, 1, sums.length))
                .collectAsList().get(0);
            double sumSeconds = (System.nanoTime() - t0) / 1e9;
            if (count != rows) {
              throw new AssertionError(path.getKey() + " counted " + count + " rows, expected " + rows);
            }
            if (expected == null) {
              expected = sum;
            } else if (!expected.equals(sum)) {
              throw new AssertionError(path.getKey() + " summed " + sum + ", another path " + expected);
            }
            if (run > 0) {
              counts.computeIfAbsent(path.getKey(), k -> new ArrayList<>()).add(countSeconds);
              totals.computeIfAbsent(path.getKey(), k -> new ArrayList<>()).add(sumSeconds);
            }
          }
        }
        report(push, rows, columns, partitions, runs, counts, totals);
      }
      spark.stop();
    } finally {
      try (var files = Files.walk(root)) {
        files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  private static Dataset<Row> thallus(SparkSession spark, String url, int partitions, boolean push) {
    return spark.read().format("thallus").option("url", url).option("dataset", "bench.duckdb").option("table", "t")
        .option("partitions", partitions).option("pushDownAggregate", push).load();
  }

  private static Dataset<Row> jdbc(SparkSession spark, String url, String driver, String table, long rows,
      int partitions, boolean push) {
    org.apache.spark.sql.DataFrameReader reader = spark.read().format("jdbc");
    if (url.startsWith("jdbc:duckdb:")) {
      reader = reader.option("duckdb.read_only", "true"); // the server has the file attached read-only too
    }
    return reader.option("url", url).option("driver", driver).option("dbtable", table)
        .option("partitionColumn", "c0").option("lowerBound", 0).option("upperBound", rows)
        .option("numPartitions", partitions).option("fetchsize", 65_536).option("pushDownAggregate", push).load();
  }

  private static void report(boolean push, long rows, int columns, int partitions, int runs,
      Map<String, List<Double>> counts, Map<String, List<Double>> totals) {
    System.out.printf(Locale.ROOT, "%n%,d rows x %d BIGINT, %d partitions, local[2], median of %d runs, aggregate "
        + "pushdown %s%n", rows, columns, partitions, runs, push ? "ON (server aggregates)" : "off (rows move)");
    List<String> baselines = counts.keySet().stream().filter(k -> k.startsWith("spark jdbc")).toList();
    StringBuilder header = new StringBuilder("| path | count() s | sum() of every column s |");
    StringBuilder rule = new StringBuilder("|---|---|---|");
    for (String baseline : baselines) {
      header.append(" count, sum vs ").append(baseline.substring("spark ".length())).append(" |");
      rule.append("---|");
    }
    System.out.println(header);
    System.out.println(rule);
    for (String path : counts.keySet()) {
      double count = median(counts.get(path));
      double sum = median(totals.get(path));
      StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "| %s | %.3f | %.3f |", path, count, sum));
      for (String baseline : baselines) {
        line.append(String.format(Locale.ROOT, " %.1fx, %.1fx |", median(counts.get(baseline)) / count,
            median(totals.get(baseline)) / sum));
      }
      System.out.println(line);
    }
  }

  private static double median(List<Double> values) {
    double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    int n = sorted.length;
    return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  }

  private static Map<String, String> parse(String[] args) {
    Map<String, String> options = new LinkedHashMap<>();
    for (int i = 0; i < args.length; i++) {
      if (!args[i].startsWith("--")) {
        throw new IllegalArgumentException("unexpected argument " + args[i]);
      }
      String key = args[i].substring(2);
      if (key.equals("pushdown") || key.equals("no-thallus-jdbc")) {
        options.put(key, "true");
      } else if (i + 1 < args.length) {
        options.put(key, args[++i]);
      } else {
        throw new IllegalArgumentException("--" + key + " needs a value");
      }
    }
    return options;
  }
}
