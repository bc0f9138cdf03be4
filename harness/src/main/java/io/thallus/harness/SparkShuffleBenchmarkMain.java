package io.thallus.harness;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import org.apache.spark.SparkConf;
import org.apache.spark.deploy.master.Master;
import org.apache.spark.deploy.worker.Worker;
import org.apache.spark.executor.TaskMetrics;
import org.apache.spark.rpc.RpcEnv;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import scala.Option;

/**
 * Spark's sort shuffle against the Thallus exchange (thallus-spark-shuffle) on standalone clusters of executor JVMs
 * started here: the research's synthetic plan (range, shuffle by key, project, shuffle again, aggregate) and TPC-H
 * Q3, Q9 and Q18 over Spark's Parquet reader, broadcasts off. Five modes: Spark's shuffle, the Thallus exchange on
 * Spark's shuffle files ("thallus files"), and on exchange endpoints (spark.thallus.shuffle.store=exchange, which is
 * executor-wide: a second cluster, where Spark's shuffle runs again as that cluster's baseline), pulled ("thallus
 * exchange", spark.thallus.shuffle.exchange.push=off) or pushed ("thallus exchange push", push=on; and once more
 * with pushCommitWait=0, the map tasks not waiting for their pushes to land before they commit). Within a cluster
 * the modes alternate (spark.thallus.shuffle.enabled), medians of --runs after a warm-up; answers compared; shuffle bytes and times from Spark's task metrics.
 *
 * <p>Options: --rows 5000000 --data harness/target/tpch-sf1 --runs 3 --executors 2 --executor-memory 2g
 * --partitions 200 --queries synthetic,Q3,Q9,Q18 --tpch-queries thallus-spark/src/test/resources/tpch (the folder
 * of q3.sql, q9.sql, q18.sql) --exchange-transport shm (the exchange store's peer transport) --hosts 1 (with 2 or
 * more, the workers sit on that many loopback addresses, 127.0.0.2, 127.0.0.3, ..., worker i on the (i mod hosts)th,
 * as in the multi-host test bed: each executor is a child JVM bound to its worker's address, so Spark sees separate
 * hosts; the master and the driver stay on 127.0.0.1. Use a transport that crosses hosts, tcp.)
 * --stores spark,exchange (which clusters to start: the shuffle-files store's, the exchange store's)
 * --exchange-compression lz4,none (spark.thallus.shuffle.exchange.compression, executor-wide: one exchange cluster
 * per value, each with its own Spark baseline; unset, the store's default) --exchange-modes pull,push,push-nowait
 * (which exchange modes run).
 */
public final class SparkShuffleBenchmarkMain {
  private static final String HOST = "127.0.0.1";
  /** Pushed, but the map tasks commit without waiting for their pushes to land. */
  private static final String NO_WAIT = "thallus exchange push, no commit wait";
  private SparkShuffleBenchmarkMain() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> options = SparkRuns.options(args);
    long rows = Long.parseLong(options.getOrDefault("rows", "5000000"));
    Path data = Path.of(options.getOrDefault("data", "harness/target/tpch-sf1")).toAbsolutePath();
    int runs = Integer.parseInt(options.getOrDefault("runs", "3"));
    int executors = Integer.parseInt(options.getOrDefault("executors", "2"));
    String executorMemory = options.getOrDefault("executor-memory", "2g");
    List<String> queries = List.of(options.getOrDefault("queries", "synthetic,Q3,Q9,Q18").split(","));
    int hosts = Integer.parseInt(options.getOrDefault("hosts", "1"));
    if (hosts < 1 || hosts > 250) {
      throw new IllegalArgumentException("--hosts must be 1 to 250 (loopback addresses 127.0.0.2 up): " + hosts);
    }

    // Modes by cluster: the store is an executor-wide setting, so the exchange store gets a cluster of its own, and
    // Spark's shuffle runs again on it (alternating with it, as on the first) for a baseline of the same cluster.
    Map<String, Map<String, List<double[]>>> results = new LinkedHashMap<>();
    Map<String, List<String>> expected = new LinkedHashMap<>();
    List<String> stores = List.of(options.getOrDefault("stores", "spark,exchange").split(","));
    if (stores.contains("spark")) {
      runCluster("spark", null, new String[] {"spark", "thallus files"}, options, data, runs, executors,
          executorMemory, rows, queries, results, expected);
    }
    if (stores.contains("exchange")) {
      List<String> exchangeModes = List.of(options.getOrDefault("exchange-modes", "pull,push,push-nowait").split(","));
      String compressions = options.get("exchange-compression");
      for (String compression : compressions == null ? new String[] {null} : compressions.split(",")) {
        String suffix = compression == null ? "" : " [" + compression + "]";
        List<String> modes = new ArrayList<>();
        modes.add("spark (exchange cluster" + suffix + ")");
        if (exchangeModes.contains("pull")) {
          modes.add("thallus exchange" + suffix);
        }
        if (exchangeModes.contains("push")) {
          modes.add("thallus exchange push" + suffix);
        }
        if (exchangeModes.contains("push-nowait")) {
          modes.add(NO_WAIT + suffix);
        }
        runCluster("exchange", compression, modes.toArray(String[]::new), options, data, runs, executors,
            executorMemory, rows, queries, results, expected);
      }
    }

    System.out.printf(Locale.ROOT, "%n%d executors x 1 core, %s each, on %d host address(es); exchange transport %s;"
        + " synthetic plan %d rows; TPC-H %s; medians of %d runs; answers equal%n", executors, executorMemory, hosts,
        options.getOrDefault("exchange-transport", "shm"), rows, data.getFileName(), runs);
    System.out.println("| workload | mode | s | speed-up vs Spark on the same cluster | shuffle MB"
        + " | shuffle bytes vs Spark's (lz4) | map s | fetch wait s |");
    System.out.println("|---|---|---|---|---|---|---|---|");
    Map<String, double[]> logSums = new LinkedHashMap<>();
    for (Map.Entry<String, Map<String, List<double[]>>> workload : results.entrySet()) {
      double[] baseline = null;
      for (Map.Entry<String, List<double[]>> mode : workload.getValue().entrySet()) {
        double[] m = medians(mode.getValue());
        if (mode.getKey().startsWith("spark")) {
          baseline = m;
        }
        double speedUp = baseline[0] / m[0];
        System.out.printf(Locale.ROOT, "| %s | %s | %.2f | %.2fx | %.1f | %.2fx | %.2f | %.2f |%n",
            workload.getKey(), mode.getKey(), m[0], speedUp, m[1] / 1e6, m[1] / baseline[1], m[3], m[4]);
        if (workload.getKey().startsWith("Q") && mode.getKey().startsWith("thallus")) {
          double[] sum = logSums.computeIfAbsent(mode.getKey(), k -> new double[2]);
          sum[0] += Math.log(speedUp);
          sum[1]++;
        }
      }
    }
    System.out.println();
    System.out.println("Where the Thallus exchange's task time goes (seconds summed over tasks, medians; with the"
        + " exchange store, 'encode' is the copy into the endpoint):");
    System.out.println("| workload | mode | map tasks' run time | rows to Arrow (incl. the child's own work) | encode +"
        + " compress | file write | reduce: decompress + decode | fetch wait | commits waiting for pushes | pushes"
        + " | pull requests | pushed batches read |");
    System.out.println("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (Map.Entry<String, Map<String, List<double[]>>> workload : results.entrySet()) {
      for (String mode : workload.getValue().keySet()) {
        if (!mode.startsWith("thallus")) {
          continue;
        }
        double[] t = medians(workload.getValue().get(mode));
        System.out.printf(Locale.ROOT, "| %s | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %d | %d | %d |%n",
            workload.getKey(), mode, t[3], t[5], t[6], t[8], t[7], t[4], t[9], (long) t[10], (long) t[11],
            (long) t[12]);
      }
    }
    logSums.forEach((mode, sum) -> System.out.printf(Locale.ROOT, "TPC-H geometric mean speed-up, %s: %.2fx%n",
        mode, Math.exp(sum[0] / sum[1])));
  }

  /** Starts a standalone cluster whose executors keep the exchange's batches in {@code store}, and runs the modes. */
  private static void runCluster(String store, String compression, String[] modes, Map<String, String> options,
      Path data, int runs,
      int executors, String executorMemory, long rows, List<String> queries,
      Map<String, Map<String, List<double[]>>> results, Map<String, List<String>> expected) throws Exception {
    List<RpcEnv> cluster = new ArrayList<>();
    SparkConf clusterConf = new SparkConf().set("spark.ui.enabled", "false");
    RpcEnv master = Master.startRpcEnvAndEndpoint(HOST, 0, 0, clusterConf)._1();
    cluster.add(master);
    String masterUrl = "spark://" + HOST + ":" + master.address().port();
    Path work = Files.createTempDirectory("thallus-shuffle-bench");
    int workerMemoryMb = (int) (parseMb(executorMemory) + 256);
    int hosts = Integer.parseInt(options.getOrDefault("hosts", "1"));
    for (int i = 0; i < executors; i++) {
      // One host: every worker on the driver's address. More: worker i on its own loopback address, and the executor
      // it launches binds to that address, so Spark (and the exchange's peers) see separate hosts.
      String workerHost = hosts == 1 ? HOST : "127.0.0." + (2 + i % hosts);
      cluster.add(Worker.startRpcEnvAndEndpoint(workerHost, 0, 0, 1, workerMemoryMb, new String[] {masterUrl},
          Files.createDirectories(work.resolve("worker" + i)).toString(), Option.apply(i), clusterConf.clone(),
          Option.empty()));
    }
    List<String> flags = ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
        .filter(f -> f.startsWith("--add-opens") || f.startsWith("--enable-native-access")
            || f.startsWith("--sun-misc") || f.startsWith("-Dlog4j") || f.startsWith("-Djdk")
            || f.startsWith("-Dio.netty"))
        .toList();
    SparkSession.Builder builder = SparkSession.builder().master(masterUrl).appName("thallus-shuffle-bench-" + store)
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", HOST).config("spark.driver.bindAddress", HOST)
        .config("spark.executor.memory", executorMemory).config("spark.executor.cores", "1")
        .config("spark.cores.max", String.valueOf(executors))
        .config("spark.executor.extraClassPath", System.getProperty("java.class.path"))
        .config("spark.executor.extraJavaOptions", String.join(" ", flags))
        .config("spark.executorEnv.SPARK_TESTING", "1")
        .config("spark.executorEnv.SPARK_SCALA_VERSION", "2.13")
        .config("spark.shuffle.manager", "io.thallus.spark.shuffle.ThallusShuffleManager")
        .config("spark.sql.extensions", "io.thallus.spark.shuffle.ThallusShuffleExtensions")
        .config("spark.thallus.shuffle.store", store)
        // One host: a local transport (shm). Across host addresses: one that crosses hosts (tcp).
        .config("spark.thallus.shuffle.exchange.transport", options.getOrDefault("exchange-transport", "shm"))
        .config("spark.sql.autoBroadcastJoinThreshold", "-1")
        .config("spark.sql.shuffle.partitions", options.getOrDefault("partitions", "200"));
    if (compression != null) {
      builder.config("spark.thallus.shuffle.exchange.compression", compression);
    }
    SparkSession spark = builder.getOrCreate();
    long deadline = System.nanoTime() + 180_000_000_000L;
    while (spark.sparkContext().statusTracker().getExecutorInfos().length < executors + 1) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("Executors did not register within 3 minutes");
      }
      Thread.sleep(200); // polling for a condition, with the deadline above
    }
    ShuffleMetrics metrics = new ShuffleMetrics();
    spark.sparkContext().addSparkListener(metrics);

    for (String table : List.of("customer", "orders", "lineitem", "part", "supplier", "partsupp", "nation")) {
      spark.read().parquet(data.resolve(table + ".parquet").toString()).createOrReplaceTempView(table);
    }
    Map<String, Supplier<Dataset<Row>>> workloads = new LinkedHashMap<>();
    workloads.put("synthetic", () -> spark.range(rows).toDF()
        .repartition(org.apache.spark.sql.functions.col("id"))
        .selectExpr("id * 7 + 3 AS v", "id % 1000 AS k")
        .repartition(org.apache.spark.sql.functions.col("v"))
        .selectExpr("SUM(v)", "SUM(k)", "COUNT(*)"));
    // The TPC-H texts the whole-plan tests and benchmark run, not copies of them.
    Path texts = Path.of(options.getOrDefault("tpch-queries", "thallus-spark/src/test/resources/tpch"));
    for (String q : List.of("3", "9", "18")) {
      String text = Files.readString(texts.resolve("q" + q + ".sql"));
      workloads.put("Q" + q, () -> spark.sql(text));
    }
    workloads.keySet().retainAll(queries);

    for (Map.Entry<String, Supplier<Dataset<Row>>> workload : workloads.entrySet()) {
      for (int run = 0; run <= runs; run++) { // run 0 warms up and is not counted
        for (String mode : modes) {
          spark.conf().set("spark.thallus.shuffle.enabled", String.valueOf(mode.startsWith("thallus")));
          // With the exchange store: pull only, or push every shuffle ("thallus exchange push").
          spark.conf().set("spark.thallus.shuffle.exchange.push", mode.contains(" push") ? "on" : "off");
          // The map tasks' commit waits for their pushes to land (at most 30 s), or not at all.
          spark.conf().set("spark.thallus.shuffle.exchange.pushCommitWait", mode.startsWith(NO_WAIT) ? "0" : "30s");
          metrics.reset();
          long t0 = System.nanoTime();
          Dataset<Row> query = workload.getValue().get();
          List<String> answer = SparkRuns.text(query.collectAsList());
          double seconds = (System.nanoTime() - t0) / 1e9;
          List<String> want = expected.putIfAbsent(workload.getKey(), answer);
          if (want != null && !want.equals(answer)) {
            throw new AssertionError(workload.getKey() + " on " + mode + " answered " + answer + ", not " + want);
          }
          if (mode.startsWith("thallus") && run == 0
              && !query.queryExecution().executedPlan().toString().contains("ThallusShuffleExchange")) {
            throw new AssertionError(workload.getKey() + ": the plan has no Thallus exchange");
          }
          // The job's last task-end events reach the listener before its figures are read (a deadline, no guess).
          spark.sparkContext().listenerBus().waitUntilEmpty(60_000);
          double[] figures = metrics.figures(seconds);
          System.out.printf(Locale.ROOT, "%s %s run %d: %.2f s, %.1f MB written, %d records; map tasks %.2f s,"
              + " to Arrow %.2f s, encode %.2f s, write %.2f s, decode %.2f s, fetch wait %.2f s; commits waiting for"
              + " pushes %.2f s, pushes %d, pull requests %d, pushed batches read %d%n",
              workload.getKey(), mode, run, seconds, figures[1] / 1e6, (long) figures[2], figures[3], figures[5],
              figures[6], figures[8], figures[7], figures[4], figures[9], (long) figures[10], (long) figures[11],
              (long) figures[12]);
          if (run > 0) {
            results.computeIfAbsent(workload.getKey(), k -> new LinkedHashMap<>())
                .computeIfAbsent(mode, k -> new ArrayList<>()).add(figures);
          }
        }
      }
    }
    spark.stop();
    cluster.reversed().forEach(env -> {
      env.shutdown();
      env.awaitTermination();
    });
  }

  private static double[] medians(List<double[]> runs) {
    double[] medians = new double[runs.get(0).length];
    for (int i = 0; i < medians.length; i++) {
      List<Double> values = new ArrayList<>();
      for (double[] run : runs) {
        values.add(run[i]);
      }
      medians[i] = SparkRuns.median(values);
    }
    return medians;
  }

  private static long parseMb(String size) {
    String s = size.trim().toLowerCase(Locale.ROOT);
    if (s.endsWith("g")) {
      return Long.parseLong(s.substring(0, s.length() - 1)) * 1024;
    }
    if (s.endsWith("m")) {
      return Long.parseLong(s.substring(0, s.length() - 1));
    }
    throw new IllegalArgumentException("--executor-memory must end in m or g: " + size);
  }

  /**
   * Shuffle bytes and records written, the run time of tasks that wrote shuffle output (map side: reading,
   * partitioning, converting, compressing, writing) and the reducers' fetch wait, summed over a run's tasks.
   */
  private static final class ShuffleMetrics extends SparkListener {
    private final LongAdder bytes = new LongAdder();
    private final LongAdder records = new LongAdder();
    private final LongAdder mapRunMillis = new LongAdder();
    private final LongAdder fetchWaitMillis = new LongAdder();
    private final LongAdder writeNanos = new LongAdder();
    private final Map<String, LongAdder> thallusNanos = new java.util.concurrent.ConcurrentHashMap<>();

    @Override
    public void onTaskEnd(SparkListenerTaskEnd end) {
      TaskMetrics m = end.taskMetrics();
      if (m == null) {
        return;
      }
      bytes.add(m.shuffleWriteMetrics().bytesWritten());
      records.add(m.shuffleWriteMetrics().recordsWritten());
      if (m.shuffleWriteMetrics().bytesWritten() > 0) {
        mapRunMillis.add(m.executorRunTime());
      }
      fetchWaitMillis.add(m.shuffleReadMetrics().fetchWaitTime());
      writeNanos.add(m.shuffleWriteMetrics().writeTime());
      // The exchange's own timings (its SQL metrics, named "thallus ..."), as the task reported them.
      scala.jdk.javaapi.CollectionConverters.asJava(end.taskInfo().accumulables()).forEach(info -> {
        String name = info.name().isDefined() ? info.name().get() : "";
        if (name.startsWith("thallus") && info.update().isDefined()
            && info.update().get() instanceof Long update) {
          thallusNanos.computeIfAbsent(name, k -> new LongAdder()).add(update);
        }
      });
    }

    void reset() {
      bytes.reset();
      records.reset();
      mapRunMillis.reset();
      fetchWaitMillis.reset();
      writeNanos.reset();
      thallusNanos.clear();
    }

    private double thallusSeconds(String prefix) {
      return thallusNanos.entrySet().stream().filter(e -> e.getKey().startsWith(prefix))
          .mapToLong(e -> e.getValue().sum()).sum() / 1e9;
    }

    private double thallusCount(String prefix) {
      return thallusNanos.entrySet().stream().filter(e -> e.getKey().startsWith(prefix))
          .mapToLong(e -> e.getValue().sum()).sum();
    }

    double[] figures(double seconds) {
      return new double[] {seconds, bytes.sum(), records.sum(), mapRunMillis.sum() / 1e3,
          fetchWaitMillis.sum() / 1e3, thallusSeconds("thallus map: rows"), thallusSeconds("thallus map: encode"),
          thallusSeconds("thallus reduce"), writeNanos.sum() / 1e9, thallusSeconds("thallus push"),
          thallusCount("thallus exchange: pushes"), thallusCount("thallus exchange: pull"),
          thallusCount("thallus exchange: pushed batches")};
    }
  }
}
