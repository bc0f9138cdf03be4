package io.thallus.harness;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.thallus.Location;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import io.thallus.testing.ShardedServers;
import java.nio.file.Files;
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
import java.util.TreeMap;
import java.util.function.Supplier;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * Issue 38's benchmark on one machine: TPC-H {@code lineitem} split by {@code l_orderkey} range into three parts,
 * each the shard of its own server (in this JVM, on 127.0.0.1, .2 and .3, each with its own data root and DuckDB),
 * against one server holding all three parts (hard links to the same files; read with the defaults, one stream, and
 * with {@code partitions=3}) and Spark's Parquet reader over the same three files. TPC-H Q1, Q6 and a selective
 * filter (an {@code l_orderkey} range inside the middle shard), Spark local[2]; each query timed from loading the
 * source (a sharded read's discovery) to its rows; medians of {@code --runs} after one warm-up round; every answer
 * compared with the first path's (the run stops on a difference). For the thallus paths each server's Micrometer
 * registry says what its streams sent while the query ran (after planning, so the driver's EXPLAIN for the row
 * estimate is not counted): streams, transport, batches and bytes of Arrow buffers. With one partition per shard,
 * each shard's server serves exactly one task.
 *
 * <pre>
 * harness/spark-shard-bench.sh [--sf 1] [--runs 3] [--data DIR] [--work DIR]
 * </pre>
 */
public final class SparkShardBenchmarkMain {
  private SparkShardBenchmarkMain() {}

  private static final String SELECTIVE = """
      SELECT l_orderkey, l_linenumber, l_quantity, l_extendedprice, l_shipdate FROM lineitem
      WHERE l_orderkey BETWEEN %d AND %d ORDER BY l_orderkey, l_linenumber""";

  /** One path's servers and how Spark reads lineitem through it. */
  private record ReadPath(String name, List<Server> servers, Supplier<Dataset<Row>> lineitem) {}

  /** A server and the registry its metrics go to. */
  private record Server(String label, ThallusServer server, SimpleMeterRegistry meters) {}

  /** What one server sent over one transport while a query ran. */
  private record Sent(String server, long streams, String transport, long batches, long bytes) {}

  public static void main(String[] args) throws Exception {
    Map<String, String> options = new LinkedHashMap<>();
    for (int i = 0; i < args.length; i += 2) {
      String key = args[i].replaceFirst("^--", "");
      if (!List.of("data", "work", "runs").contains(key) || i + 1 == args.length) {
        throw new IllegalArgumentException("unknown option or missing value: " + args[i]
            + " (expected --data DIR, --work DIR, --runs N)");
      }
      options.put(key, args[i + 1]);
    }
    Path data = Path.of(options.getOrDefault("data", "harness/target/tpch-sf1")).toAbsolutePath();
    Path work = Path.of(options.getOrDefault("work", "harness/target/shard-bench")).toAbsolutePath();
    int runs = Integer.parseInt(options.getOrDefault("runs", "3"));
    if (runs < 1) {
      throw new IllegalArgumentException("--runs must be at least 1, got " + runs);
    }
    Path source = data.resolve("lineitem.parquet");
    if (!Files.isRegularFile(source)) {
      throw new IllegalArgumentException("no " + source + ": make it with harness/tpch-data.sh");
    }
    long[] bounds = bounds(source);
    // A range of 2,000 keys inside the middle shard (TPC-H uses about one key in four).
    long from = bounds[1] + (bounds[2] - bounds[1]) / 2;
    Map<String, String> queries = new LinkedHashMap<>();
    queries.put("Q1", SparkTpchBenchmarkMain.Q1);
    queries.put("Q6", SparkTpchBenchmarkMain.Q6);
    queries.put("filter", String.format(Locale.ROOT, SELECTIVE, from, from + 1_999));
    System.out.printf(Locale.ROOT, "lineitem of %s split by l_orderkey: p0 [%d, %d), p1 [%d, %d), p2 [%d, %d); "
        + "the filter reads keys %d to %d (in p1)%n", data.getFileName(), bounds[0], bounds[1], bounds[1], bounds[2],
        bounds[2], bounds[3], from, from + 1_999);

    try (BufferAllocator allocator = new RootAllocator();
         ShardedServers sharded = ShardedServers.start(allocator, work, "lineitem",
             (part, dir) -> writePart(source, bounds, part, dir, work))) {
      List<Server> shards = sharded.nodes().stream().map(node -> new Server("shard p" + node.part() + " ("
          + node.host() + ")", node.server(), node.meters())).toList();
      SimpleMeterRegistry meters = new SimpleMeterRegistry();
      Path all = work.resolve("all");
      try (ThallusServer oneServer = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0),
          DuckDBEngine.builder().filesUnder(all).build()).meterRegistry(meters).dataRoot(all).build().start()) {
        run(data.getFileName().toString(), work, queries, runs, shards,
            new Server("one server (127.0.0.1)", oneServer, meters));
      }
    }
  }

  private static void run(String dataName, Path work, Map<String, String> queries, int runs, List<Server> shards,
      Server one) {
    String urls = String.join(",", shards.stream().map(s -> s.server().getLocation().toString()).toList());
    SparkSession spark = SparkSession.builder().master("local[2]").appName("thallus-shard-bench")
        .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1").config("spark.sql.shuffle.partitions", "2")
        .getOrCreate();
    List<ReadPath> paths = List.of(
        new ReadPath("thallus sharded (3 servers)", shards, () -> spark.read().format("thallus").option("url", urls)
            .option("sharded", "lineitem").load()),
        new ReadPath("thallus one server (defaults)", List.of(one), () -> spark.read().format("thallus")
            .option("url", one.server().getLocation().toString()).option("dataset", "lineitem").load()),
        new ReadPath("thallus one server (partitions=3)", List.of(one), () -> spark.read().format("thallus")
            .option("url", one.server().getLocation().toString()).option("dataset", "lineitem")
            .option("partitions", "3").load()),
        new ReadPath("spark parquet", List.of(), () -> spark.read().parquet(partFiles(work).toArray(String[]::new))));

    Map<String, Map<String, List<Double>>> times = new LinkedHashMap<>();
    Map<String, Map<String, List<Double>>> planning = new LinkedHashMap<>();
    Map<String, Map<String, List<Sent>>> traffic = new LinkedHashMap<>();
    Map<String, List<String>> answers = new LinkedHashMap<>();
    for (int run = 0; run <= runs; run++) { // run 0 warms up and is not counted
      for (Map.Entry<String, String> query : queries.entrySet()) {
        for (ReadPath path : paths) {
          // Timed from the source's load: a sharded read asks every server for its parts there.
          long t0 = System.nanoTime();
          path.lineitem().get().createOrReplaceTempView("lineitem");
          Dataset<Row> result = spark.sql(query.getValue());
          result.queryExecution().executedPlan(); // planning (and its EXPLAIN for the estimate) before counting
          double planned = (System.nanoTime() - t0) / 1e9;
          List<Map<String, double[]>> before = path.servers().stream().map(s -> sent(s.meters())).toList();
          List<String> rows = SparkRuns.text(result.collectAsList());
          double seconds = (System.nanoTime() - t0) / 1e9;
          List<String> first = answers.putIfAbsent(query.getKey(), rows);
          if (first != null && !first.equals(rows)) {
            throw new AssertionError(path.name() + " answered " + query.getKey() + " with " + rows + ", "
                + paths.get(0).name() + " with " + first);
          }
          if (rows.isEmpty()) {
            throw new AssertionError(query.getKey() + " answered no rows: the benchmark measures nothing");
          }
          if (run > 0) {
            times.computeIfAbsent(query.getKey(), k -> new LinkedHashMap<>())
                .computeIfAbsent(path.name(), k -> new ArrayList<>()).add(seconds);
            planning.computeIfAbsent(query.getKey(), k -> new LinkedHashMap<>())
                .computeIfAbsent(path.name(), k -> new ArrayList<>()).add(planned);
          }
          List<Sent> sent = new ArrayList<>();
          for (int i = 0; i < path.servers().size(); i++) {
            sent.addAll(difference(path.servers().get(i), before.get(i)));
          }
          traffic.computeIfAbsent(query.getKey(), k -> new LinkedHashMap<>()).put(path.name(), sent);
        }
      }
    }
    print(dataName, queries, runs, paths, times, planning, traffic, answers);
    spark.stop();
  }

  private static void print(String dataName, Map<String, String> queries, int runs, List<ReadPath> paths,
      Map<String, Map<String, List<Double>>> times, Map<String, Map<String, List<Double>>> planning,
      Map<String, Map<String, List<Sent>>> traffic,
      Map<String, List<String>> answers) {
    System.out.printf(Locale.ROOT, "%nTPC-H lineitem of %s in three shards, Spark local[2], %d cores, median of %d "
        + "runs (answers equal on every path); in brackets the median time from loading the source to the "
        + "executed plan%n",
        dataName, Runtime.getRuntime().availableProcessors(), runs);
    StringBuilder header = new StringBuilder("| query | rows |");
    paths.forEach(p -> header.append(' ').append(p.name()).append(" s |"));
    paths.subList(1, paths.size()).forEach(p -> header.append(" sharded vs ").append(p.name()).append(" |"));
    System.out.println(header);
    System.out.println("|---|---|" + "---|".repeat(2 * paths.size() - 1));
    for (Map.Entry<String, Map<String, List<Double>>> query : times.entrySet()) {
      StringBuilder line = new StringBuilder("| " + query.getKey() + " | " + answers.get(query.getKey()).size() + " |");
      List<Double> medians = new ArrayList<>();
      for (ReadPath path : paths) {
        double median = SparkRuns.median(query.getValue().get(path.name()));
        medians.add(median);
        line.append(String.format(Locale.ROOT, " %.2f (plan %.2f) |", median,
            SparkRuns.median(planning.get(query.getKey()).get(path.name()))));
      }
      for (int i = 1; i < medians.size(); i++) {
        line.append(String.format(Locale.ROOT, " %.2fx |", medians.get(i) / medians.get(0)));
      }
      System.out.println(line);
    }
    System.out.printf(Locale.ROOT, "%nWhat each server sent while the query ran (the last run; one task per shard; "
        + "bytes are Arrow buffers, from each server's thallus.sent and thallus.batches.sent counters)%n");
    System.out.println("| query | path | server (task) | streams | transport | batches | bytes |");
    System.out.println("|---|---|---|---|---|---|---|");
    for (String query : queries.keySet()) {
      for (ReadPath path : paths) {
        if (path.servers().isEmpty()) {
          continue;
        }
        List<Sent> sent = traffic.get(query).get(path.name());
        long batches = 0;
        long bytes = 0;
        for (Sent s : sent) {
          System.out.printf(Locale.ROOT, "| %s | %s | %s | %d | %s | %d | %,d |%n", query, path.name(), s.server(),
              s.streams(), s.transport(), s.batches(), s.bytes());
          batches += s.batches();
          bytes += s.bytes();
        }
        System.out.printf(Locale.ROOT, "| %s | %s | **sum** | | | %d | **%,d** |%n", query, path.name(), batches,
            bytes);
      }
    }
  }

  /** Per transport, the batches and bytes a server's registry counts so far, and its finished streams under "". */
  private static Map<String, double[]> sent(SimpleMeterRegistry meters) {
    Map<String, double[]> sent = new TreeMap<>();
    for (Counter c : meters.find("thallus.batches.sent").counters()) {
      sent.computeIfAbsent(c.getId().getTag("transport"), t -> new double[2])[0] = c.count();
    }
    for (Counter c : meters.find("thallus.sent").counters()) {
      sent.computeIfAbsent(c.getId().getTag("transport"), t -> new double[2])[1] = c.count();
    }
    double streams = 0;
    for (Counter c : meters.find("thallus.queries").counters()) {
      streams += c.count();
    }
    sent.put("", new double[] {streams, 0});
    return sent;
  }

  /** What the server sent since {@code before}, one row per transport it used (a row saying "none" if none). */
  private static List<Sent> difference(Server server, Map<String, double[]> before) {
    Map<String, double[]> now = sent(server.meters());
    long streams = Math.round(now.get("")[0] - before.get("")[0]);
    List<Sent> sent = new ArrayList<>();
    for (Map.Entry<String, double[]> entry : now.entrySet()) {
      double[] then = before.getOrDefault(entry.getKey(), new double[2]);
      long batches = Math.round(entry.getValue()[0] - then[0]);
      if (!entry.getKey().isEmpty() && batches > 0) {
        sent.add(new Sent(server.label(), streams, entry.getKey(), batches,
            Math.round(entry.getValue()[1] - then[1])));
      }
    }
    if (sent.isEmpty()) {
      sent.add(new Sent(server.label(), streams, "none", 0, 0));
    }
    return sent;
  }

  /** The smallest key, the two points that split lineitem's keys in three ranges, and the largest key plus one. */
  private static long[] bounds(Path source) throws Exception {
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = duckdb.createStatement();
         ResultSet rs = statement.executeQuery("SELECT min(l_orderkey), max(l_orderkey) FROM read_parquet('"
             + source + "')")) {
      rs.next();
      long min = rs.getLong(1);
      long max = rs.getLong(2) + 1;
      return new long[] {min, min + (max - min) / 3, min + 2 * (max - min) / 3, max};
    }
  }

  /**
   * Writes lineitem's {@code part}th {@code l_orderkey} range as {@code dir/data.parquet} (DuckDB, in the source's
   * order; {@code dir} is {@code node<i>/lineitem/part<i>} under {@code work}) and a hard link to it under
   * {@code all/lineitem} for the one server.
   */
  private static void writePart(Path source, long[] bounds, int part, Path dir, Path work) throws Exception {
    Path file = dir.resolve("data.parquet");
    Files.deleteIfExists(file);
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = duckdb.createStatement()) {
      statement.execute("COPY (SELECT * FROM read_parquet('" + source + "') WHERE l_orderkey >= " + bounds[part]
          + " AND l_orderkey < " + bounds[part + 1] + ") TO '" + file + "' (FORMAT parquet)");
    }
    Path link = Files.createDirectories(work.resolve("all/lineitem")).resolve("part" + part + ".parquet");
    Files.deleteIfExists(link);
    Files.createLink(link, file);
  }

  private static List<String> partFiles(Path work) {
    List<String> files = new ArrayList<>();
    for (int part = 0; part < 3; part++) {
      files.add(work.resolve("node" + part + "/lineitem/part" + part + "/data.parquet").toString());
    }
    return files;
  }
}
