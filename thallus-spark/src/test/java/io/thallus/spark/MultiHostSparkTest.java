package io.thallus.spark;

import static org.assertj.core.api.Assertions.assertThat;

import io.thallus.testing.Eventually;
import io.thallus.testing.ShardedServers;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.SparkConf;
import org.apache.spark.deploy.master.Master;
import org.apache.spark.deploy.worker.Worker;
import org.apache.spark.rpc.RpcEnv;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import scala.Option;

/**
 * The multi-host test bed: a Spark standalone master and one worker per loopback address (127.0.0.1, .2, .3), started
 * in this JVM from the test class path (no Spark distribution), each worker launching its executor as a child JVM
 * bound to its worker's address, so Spark sees three hosts; a Thallus server on each address holds one shard of a
 * sharded lineitem. A read must run each shard's task on the executor of its shard's host (NODE_LOCAL), and return
 * what DuckDB returns over all the files.
 */
class MultiHostSparkTest {
  @TempDir
  static Path work;

  private static final String[] HOSTS = ShardedServers.HOSTS.toArray(String[]::new);
  private static final int ROWS_PER_PART = 20_000;
  private static BufferAllocator allocator;
  private static ShardedServers servers;
  private static final List<io.micrometer.core.instrument.simple.SimpleMeterRegistry> meters = new ArrayList<>();
  private static final List<Path> files = new ArrayList<>();
  private static final List<RpcEnv> cluster = new ArrayList<>();
  private static SparkSession spark;
  private static String urls;

  @BeforeAll
  static void start() throws Exception {
    allocator = new RootAllocator();
    servers = ShardedServers.start(allocator, work, "lineitem", ShardedServers.lineitem(ROWS_PER_PART));
    for (ShardedServers.Node node : servers.nodes()) {
      files.add(node.partDir().resolve("data.parquet"));
      meters.add(node.meters());
    }
    // The servers' default transport: each task beside its server reads over a local one (shm or cma).
    urls = servers.urls();

    // Another test's local session would be this JVM's SparkContext: one at a time.
    SparkSession.getDefaultSession().foreach(s -> {
      s.stop();
      return null;
    });
    SparkConf clusterConf = new SparkConf().set("spark.ui.enabled", "false");
    scala.Tuple3<RpcEnv, Object, Option<Object>> master = Master.startRpcEnvAndEndpoint(HOSTS[0], 0, 0,
        clusterConf);
    cluster.add(master._1());
    // (the tuple holds the RPC environment, then the web UI's and the REST server's ports)
    String masterUrl = "spark://" + HOSTS[0] + ":" + master._1().address().port();
    for (int i = 0; i < HOSTS.length; i++) {
      Path workDir = Files.createDirectories(work.resolve("worker" + i));
      cluster.add(Worker.startRpcEnvAndEndpoint(HOSTS[i], 0, 0, 1, 1024, new String[] {masterUrl},
          workDir.toString(), Option.apply(i), clusterConf.clone(), Option.empty()));
    }
    List<String> flags = ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
        .filter(f -> f.startsWith("--add-opens") || f.startsWith("--enable-native-access") || f.startsWith("-D"))
        .toList();
    spark = SparkSession.builder()
        .master(masterUrl)
        .appName("thallus-multi-host-test")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", HOSTS[0])
        .config("spark.driver.bindAddress", HOSTS[0])
        .config("spark.executor.memory", "512m")
        .config("spark.executor.cores", "1")
        .config("spark.cores.max", String.valueOf(HOSTS.length))
        .config("spark.executor.extraClassPath", System.getProperty("java.class.path"))
        .config("spark.executor.extraJavaOptions", String.join(" ", flags))
        // The launcher looks for a distribution's jars unless testing; the class path above is all it needs.
        .config("spark.executorEnv.SPARK_TESTING", "1")
        .config("spark.executorEnv.SPARK_SCALA_VERSION", "2.13")
        .config("spark.locality.wait", "60s")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate();
    Eventually.await("three executors registered", Duration.ofSeconds(90),
        () -> spark.sparkContext().statusTracker().getExecutorInfos().length == HOSTS.length + 1);
  }

  @AfterAll
  static void stop() {
    if (spark != null) {
      spark.stop();
      SparkSession.clearDefaultSession();
      SparkSession.clearActiveSession();
    }
    cluster.reversed().forEach(env -> {
      env.shutdown();
      env.awaitTermination();
    });
    servers.close();
    allocator.close();
  }

  @Test
  void eachShardsTaskRunsOnItsServersHost() throws Exception {
    Map<Integer, String> taskHosts = new ConcurrentHashMap<>();
    Map<Integer, String> taskLocality = new ConcurrentHashMap<>();
    SparkListener listener = new SparkListener() {
      @Override
      public void onTaskEnd(SparkListenerTaskEnd end) {
        if (end.stageAttemptId() == 0 && end.taskInfo().successful()) {
          taskHosts.put((end.stageId() << 16) | end.taskInfo().index(), end.taskInfo().host());
          taskLocality.put((end.stageId() << 16) | end.taskInfo().index(), end.taskInfo().taskLocality().toString());
        }
      }
    };
    spark.sparkContext().addSparkListener(listener);
    try {
      Dataset<Row> read = spark.read().format("thallus").option("url", urls).option("sharded", "lineitem").load()
          .selectExpr("l_orderkey", "l_quantity");
      List<String> preferred = new ArrayList<>();
      for (SparkPlan leaf : scala.jdk.javaapi.CollectionConverters.asJava(
          read.queryExecution().sparkPlan().collectLeaves())) {
        if (leaf instanceof BatchScanExec scan) {
          for (InputPartition p : scala.jdk.javaapi.CollectionConverters.asJava(scan.inputPartitions())) {
            preferred.add(p.preferredLocations()[0]);
          }
        }
      }
      assertThat(preferred).containsExactlyInAnyOrder(HOSTS);
      List<Row> rows = read.selectExpr("count(*)", "sum(l_orderkey)", "sum(l_quantity)").collectAsList();
      try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
           Statement statement = duckdb.createStatement();
           ResultSet want = statement.executeQuery("SELECT count(*), sum(l_orderkey), sum(l_quantity) FROM "
               + "read_parquet(['" + files.get(0) + "', '" + files.get(1) + "', '" + files.get(2) + "'])")) {
        want.next();
        assertThat(rows.get(0).getLong(0)).isEqualTo(want.getLong(1));
        assertThat(rows.get(0).getLong(1)).isEqualTo(want.getLong(2));
        assertThat(rows.get(0).getDecimal(2)).isEqualByComparingTo(want.getBigDecimal(3));
      }
      Eventually.await("the tasks' ends reported", Duration.ofSeconds(30),
          () -> taskHosts.size() >= HOSTS.length);
      // The scan's stage is the first: its task i read partition i.
      int scanStage = taskHosts.keySet().stream().mapToInt(k -> k >>> 16).min().orElseThrow();
      for (int i = 0; i < preferred.size(); i++) {
        int key = (scanStage << 16) | i;
        assertThat(taskHosts.get(key)).as("host of task %d", i).isEqualTo(preferred.get(i));
        assertThat(taskLocality.get(key)).as("locality of task %d", i).isEqualTo("NODE_LOCAL");
      }
      // Each server sent its shard's batches over a local transport (shm or cma), none over tcp.
      for (int part = 0; part < HOSTS.length; part++) {
        Map<String, Double> sentBytes = new java.util.TreeMap<>();
        for (io.micrometer.core.instrument.Counter sent : meters.get(part).find("thallus.sent").counters()) {
          sentBytes.put(sent.getId().getTag("transport"), sent.count());
        }
        assertThat(sentBytes).as("bytes sent by the server on %s, per transport", HOSTS[part])
            .doesNotContainKey("tcp").isNotEmpty();
        assertThat(sentBytes.keySet()).allMatch(t -> t.equals("shm") || t.equals("cma"));
      }
    } finally {
      spark.sparkContext().removeSparkListener(listener);
    }
  }
}
