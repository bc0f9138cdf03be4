package io.thallus.spark.shuffle;

import io.thallus.testing.Eventually;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.deploy.master.Master;
import org.apache.spark.deploy.worker.Worker;
import org.apache.spark.rpc.RpcEnv;
import org.apache.spark.sql.SparkSession;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Spark's local-cluster, built in this JVM from the test class path (no Spark distribution): a standalone master and
 * {@code workers} workers of one core and 1 GiB each, every worker running its executor as a child JVM, so shuffles
 * cross real processes and Spark's block transfer. The session runs the Thallus shuffle manager and extensions;
 * {@link ShuffleOptions#ENABLED} switches a query between the Thallus exchange and Spark's own. Made by
 * {@link #builder()}, where each test states what its cluster has beyond that.
 */
final class TestCluster implements AutoCloseable {
  private static final String HOST = "127.0.0.1";
  private final List<RpcEnv> cluster = new ArrayList<>();
  final SparkSession spark;
  final Path localDirs;

  /** Two workers, the session's settings as above; add to them with the builder's methods. */
  static Builder builder() {
    return new Builder();
  }

  /** What a test's cluster has beyond the common settings. */
  static final class Builder {
    private int workers = 2;
    private final Map<String, String> conf = new LinkedHashMap<>();
    private final Map<String, String> clusterConf = new LinkedHashMap<>();

    private Builder() {}

    Builder workers(int count) {
      this.workers = count;
      return this;
    }

    /** A setting of the session (executor-wide ones such as {@link ShuffleOptions#STORE} included). */
    Builder conf(String key, String value) {
      conf.put(key, value);
      return this;
    }

    /** The exchange store ({@code store=exchange}) with its endpoints talking over {@code transport}. */
    Builder exchangeStore(String transport) {
      return conf(ShuffleOptions.STORE, "exchange").conf(ShuffleOptions.EXCHANGE_TRANSPORT, transport);
    }

    /**
     * A setting the cluster and the application must share, given to the master, the workers and the session (such
     * as {@code spark.authenticate} and its secret: the application's RPC to the master is authenticated too).
     */
    Builder clusterConf(String key, String value) {
      clusterConf.put(key, value);
      return this;
    }

    /** Starts the cluster, the workers' folders under {@code work}, and waits until every executor registered. */
    TestCluster start(Path work) throws Exception {
      return new TestCluster(work, workers, Map.copyOf(conf), Map.copyOf(clusterConf));
    }
  }

  private TestCluster(Path work, int workers, Map<String, String> conf, Map<String, String> clusterConf)
      throws Exception {
    SparkSession.getDefaultSession().foreach(s -> {
      s.stop();
      return null;
    });
    // The workers give their executors directories under here, so the tests can see the shuffle files. One path
    // for every cluster of the test JVM: Spark caches a JVM's local directories the first time it looks.
    localDirs = Files.createDirectories(Path.of("target", "spark-local").toAbsolutePath());
    SparkConf shared = new SparkConf().set("spark.ui.enabled", "false").set("spark.local.dir", localDirs.toString());
    clusterConf.forEach(shared::set);
    scala.Tuple3<RpcEnv, Object, Option<Object>> master = Master.startRpcEnvAndEndpoint(HOST, 0, 0, shared);
    cluster.add(master._1());
    String masterUrl = "spark://" + HOST + ":" + master._1().address().port();
    for (int i = 0; i < workers; i++) {
      Path workDir = Files.createDirectories(work.resolve("worker" + i));
      cluster.add(Worker.startRpcEnvAndEndpoint(HOST, 0, 0, 1, 1024, new String[] {masterUrl},
          workDir.toString(), Option.apply(i), shared.clone(), Option.empty()));
    }
    List<String> flags = ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
        .filter(f -> f.startsWith("--add-opens") || f.startsWith("--enable-native-access")
            || f.startsWith("--sun-misc") || f.startsWith("-D"))
        .toList();
    SparkSession.Builder builder = SparkSession.builder();
    conf.forEach(builder::config);
    clusterConf.forEach(builder::config);
    spark = builder
        .master(masterUrl)
        .appName("thallus-shuffle-test")
        .config("spark.ui.enabled", "false")
        // Also the driver's: Spark caches one JVM's local directories, and the workers run in this JVM.
        .config("spark.local.dir", localDirs.toString())
        .config("spark.driver.host", HOST)
        .config("spark.driver.bindAddress", HOST)
        .config("spark.executor.memory", "768m")
        .config("spark.executor.cores", "1")
        .config("spark.cores.max", String.valueOf(workers))
        .config("spark.executor.extraClassPath", System.getProperty("java.class.path"))
        .config("spark.executor.extraJavaOptions", String.join(" ", flags))
        .config("spark.executorEnv.SPARK_TESTING", "1")
        .config("spark.executorEnv.SPARK_SCALA_VERSION", "2.13")
        .config("spark.shuffle.manager", ThallusShuffleManager.class.getName())
        .config("spark.sql.extensions", ThallusShuffleExtensions.class.getName())
        .config("spark.sql.autoBroadcastJoinThreshold", "-1")
        .config("spark.sql.shuffle.partitions", "8")
        .getOrCreate();
    Eventually.await(workers + " executors registered", Duration.ofMinutes(3),
        () -> spark.sparkContext().statusTracker().getExecutorInfos().length == workers + 1);
  }

  /**
   * With the exchange store: the driver's directory of the executors' endpoints, once every executor Spark lists as
   * alive has registered its endpoint there (so a shuffle planned now has them all as push targets).
   */
  ExchangeDirectory awaitEndpointsRegistered() throws InterruptedException {
    ExchangeDirectory directory = ((ThallusShuffleManager) SparkEnv.get().shuffleManager()).directory().orElseThrow();
    Eventually.await("every executor's endpoint registered", Duration.ofMinutes(2), () -> {
      List<String> alive = CollectionConverters.asJava(spark.sparkContext().getExecutorIds());
      return !alive.isEmpty() && directory.live(alive).size() == alive.size();
    });
    return directory;
  }

  @Override
  public void close() {
    spark.stop();
    SparkSession.clearDefaultSession();
    SparkSession.clearActiveSession();
    cluster.reversed().forEach(env -> {
      env.shutdown();
      env.awaitTermination();
    });
  }
}
