package io.thallus.benchmarks;

import io.thallus.ClientOptions;
import io.thallus.Location;
import io.thallus.QueryRequest;
import io.thallus.ShardLayout;
import io.thallus.ThallusClient;
import io.thallus.ThallusStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * Issue 38's 16-core target, server side: TPC-H Q1 over a lineitem in {@code --shards} parts, each the shard of its
 * own {@code thallus serve} process pinned with {@code taskset} to {@code --cores} cores, against one such process
 * pinned to {@code --cores} cores holding every part. This process plays Spark's part: it learns the layout
 * ({@link ShardLayout#discover}), sends each shard's partial aggregate to its server at once (a connection per shard
 * and run, as a Spark task makes), and merges the partials ({@link Q1Partials}). The one server runs the same plan
 * (its three parts' partials at once) and Q1 whole (one query over every file); the ratio is the faster of the two
 * over the sharded time. Every answer must equal DuckDB's over all the files, run in this process, or the run stops.
 *
 * <p>Data: lineitem-like rows made by DuckDB in SQL (TPC-H's columns, types and Q1 groups; values from a hash of the
 * row number), since the tpch extension is not built into DuckDB's JDBC driver (the run says whether it is); about
 * 6 million rows per unit of {@code --sf}, split into equal {@code l_orderkey} ranges, one Parquet file per part.
 *
 * <pre>
 * ShardScalingBench [--sf 10] [--shards 3] [--cores 4] [--runs 5] [--pins 0-3;4-7;8-11] [--one-pin 0-3]
 *                   [--work DIR] [--out DIR]
 * </pre>
 * {@code --pins} (one taskset list per shard server, ';' between) and {@code --one-pin} default to consecutive
 * blocks of {@code --cores} cores from core 0.
 */
public final class ShardScalingBench {
  private ShardScalingBench() {}

  private static final List<String> OPTIONS = List.of("sf", "shards", "cores", "runs", "pins", "one-pin", "work",
      "out");

  public static void main(String[] args) throws Exception {
    Map<String, String> options = new LinkedHashMap<>();
    for (int i = 0; i < args.length; i += 2) {
      String key = args[i].replaceFirst("^--", "");
      if (!OPTIONS.contains(key) || i + 1 == args.length) {
        throw new IllegalArgumentException("unknown option or missing value: " + args[i] + " (options: " + OPTIONS
            + ")");
      }
      options.put(key, args[i + 1]);
    }
    double sf = Double.parseDouble(options.getOrDefault("sf", "10"));
    int shards = Integer.parseInt(options.getOrDefault("shards", "3"));
    int cores = Integer.parseInt(options.getOrDefault("cores", "4"));
    int runs = Integer.parseInt(options.getOrDefault("runs", "5"));
    if (sf <= 0 || shards < 1 || cores < 1 || runs < 1) {
      throw new IllegalArgumentException("--sf must be above 0 and --shards, --cores, --runs at least 1");
    }
    List<String> pins = new ArrayList<>();
    for (int i = 0; i < shards; i++) {
      pins.add(i * cores + "-" + ((i + 1) * cores - 1));
    }
    if (options.containsKey("pins")) {
      pins = Arrays.asList(options.get("pins").split(";"));
      if (pins.size() != shards) {
        throw new IllegalArgumentException("--pins names " + pins.size() + " cpu lists for " + shards + " shards");
      }
    }
    String onePin = options.getOrDefault("one-pin", "0-" + (cores - 1));
    Path work = Path.of(options.getOrDefault("work", "/tmp/shard-scaling")).toAbsolutePath();
    Path out = Path.of(options.getOrDefault("out", "benchmarks/target/shard-scaling")).toAbsolutePath();
    Files.createDirectories(out);

    StringBuilder report = new StringBuilder();
    report.append(String.format(Locale.ROOT, "# Sharded Q1: %d servers on %d cores each vs one server on %d%n%n"
        + "machine: %d cores seen by this JVM, commit %s; shard pins %s, one-server pin %s, DuckDB threads %d per "
        + "server; runs %d after one warm-up (median)%n", shards, cores, cores,
        Runtime.getRuntime().availableProcessors(), System.getProperty("thallus.commit", "?"), pins, onePin, cores,
        runs));
    long rows = Math.round(sf * 6_000_000);
    String tpch = ShardData.tpchExtension();
    report.append("data: ").append(rows).append(" lineitem-like rows made in SQL (the tpch extension of this DuckDB: ")
        .append(tpch).append("), ").append(shards).append(" parts by l_orderkey range\n\n");
    System.out.print(report);
    List<Path> parts = ShardData.write(work, rows, shards);

    Q1Partials.Answer expected = new Q1Partials.Answer();
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = duckdb.createStatement();
         ResultSet result = statement.executeQuery(Q1Partials.whole("read_parquet(" + ShardData.fileList(parts)
             + ")"))) {
      expected.add(result);
    }
    System.out.print("Q1 (DuckDB over every file in this process):\n" + expected);

    report.append("| path | seconds (median) | every run | layout discovery s |\n|---|---|---|---|\n");
    double sharded;
    double oneSharded;
    double oneWhole;
    try (BufferAllocator allocator = new RootAllocator()) {
      List<ShardServerProcess> servers = new ArrayList<>();
      try {
        for (int i = 0; i < shards; i++) {
          servers.add(ShardServerProcess.start(pins.get(i), cores, ShardData.nodeRoot(work, i),
              List.of("lineitem=p" + i + ":lineitem/part" + i), out.resolve("server" + i + ".log")));
        }
        sharded = timeSharded(allocator, servers, "sharded, " + shards + " servers", runs, expected, report);
      } finally {
        for (ShardServerProcess server : servers) {
          server.close();
        }
      }
      List<String> declarations = new ArrayList<>();
      for (int i = 0; i < shards; i++) {
        declarations.add("lineitem=p" + i + ":lineitem/part" + i);
      }
      try (ShardServerProcess one = ShardServerProcess.start(onePin, cores, ShardData.oneRoot(work), declarations,
          out.resolve("one-server.log"))) {
        oneSharded = timeSharded(allocator, List.of(one), "one server, the same partials", runs, expected, report);
        oneWhole = timeWhole(allocator, one, runs, expected, report);
      }
    }
    double ratio = Math.min(oneSharded, oneWhole) / sharded;
    report.append(String.format(Locale.ROOT, "%nsharded vs the faster one-server path: %.2fx (target: at least "
        + "2x on 16 cores, %d servers of %d cores vs one of %d)%n", ratio, shards, cores, cores));
    System.out.print(report.substring(report.indexOf("| path")));
    Files.writeString(out.resolve("shard-scaling.md"), report.toString());
  }

  /** Discovers the layout once, then times {@code runs} rounds of every shard's partial at once, merged. */
  private static double timeSharded(BufferAllocator allocator, List<ShardServerProcess> servers, String label,
      int runs, Q1Partials.Answer expected, StringBuilder report) throws Exception {
    List<Location> locations = servers.stream().map(ShardServerProcess::location).toList();
    long start = System.nanoTime();
    ShardLayout layout = ShardLayout.discover(allocator, locations, "lineitem", ClientOptions.defaults());
    double discovery = (System.nanoTime() - start) / 1e9;
    ExecutorService tasks = Executors.newFixedThreadPool(layout.shards().size());
    try {
      double[] times = new double[runs];
      for (int run = -1; run < runs; run++) {
        long begin = System.nanoTime();
        List<Future<Q1Partials.Answer>> partials = new ArrayList<>();
        for (ShardLayout.Shard shard : layout.shards()) {
          ShardLayout.Holder holder = shard.holders().get(0);
          partials.add(tasks.submit(() -> query(allocator, holder.server(), Q1Partials.PARTIAL, holder.dataset())));
        }
        Q1Partials.Answer merged = new Q1Partials.Answer();
        for (Future<Q1Partials.Answer> partial : partials) {
          partial.get().groups().forEach(merged::add);
        }
        double seconds = (System.nanoTime() - begin) / 1e9;
        check(label, merged, expected);
        if (run >= 0) {
          times[run] = seconds;
        }
      }
      return row(report, label + " (" + layout.shards().size() + " partials at once, merged)", times, discovery);
    } finally {
      tasks.shutdownNow();
    }
  }

  private static double timeWhole(BufferAllocator allocator, ShardServerProcess one, int runs,
      Q1Partials.Answer expected, StringBuilder report) throws Exception {
    double[] times = new double[runs];
    for (int run = -1; run < runs; run++) {
      long begin = System.nanoTime();
      Q1Partials.Answer answer = query(allocator, one.location(), Q1Partials.whole("dataset"), "lineitem");
      double seconds = (System.nanoTime() - begin) / 1e9;
      check("one server, Q1 whole", answer, expected);
      if (run >= 0) {
        times[run] = seconds;
      }
    }
    return row(report, "one server, Q1 whole (one query over every file)", times, Double.NaN);
  }

  private static Q1Partials.Answer query(BufferAllocator allocator, Location server, String sql, String dataset) {
    Q1Partials.Answer answer = new Q1Partials.Answer();
    try (ThallusClient client = ThallusClient.connect(allocator, server, ClientOptions.defaults());
         ThallusStream stream = client.query(QueryRequest.builder(sql).dataset(dataset).build())) {
      while (stream.hasNext()) {
        try (org.apache.arrow.vector.VectorSchemaRoot batch = stream.next()) {
          answer.add(batch);
        }
      }
    }
    return answer;
  }

  private static void check(String label, Q1Partials.Answer got, Q1Partials.Answer expected) {
    if (!got.sameAs(expected)) {
      throw new IllegalStateException(label + " answered\n" + got + "where DuckDB over every file answers\n"
          + expected);
    }
  }

  private static double row(StringBuilder report, String label, double[] times, double discovery) {
    double[] sorted = times.clone();
    Arrays.sort(sorted);
    double median = sorted[sorted.length / 2];
    StringBuilder each = new StringBuilder();
    for (double t : times) {
      each.append(each.isEmpty() ? "" : ", ").append(String.format(Locale.ROOT, "%.3f", t));
    }
    String line = String.format(Locale.ROOT, "| %s | %.3f | %s | %s |%n", label, median, each,
        Double.isNaN(discovery) ? "-" : String.format(Locale.ROOT, "%.3f", discovery));
    report.append(line);
    System.out.print(line);
    return median;
  }
}
