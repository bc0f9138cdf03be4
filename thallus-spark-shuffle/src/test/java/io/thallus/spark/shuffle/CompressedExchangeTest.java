package io.thallus.spark.shuffle;

import static org.apache.spark.sql.functions.col;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.SparkConf;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.SparkPlan;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The exchange store keeping its batches compressed ({@code spark.thallus.shuffle.exchange.compression=lz4}) over
 * tcp between two executor JVMs: the synthetic plan answers as Spark's own exchange does, and Spark's shuffle-write
 * metrics count the compressed bytes, fewer than the same store writes uncompressed (how they compare with Spark's own
 * shuffle and its default lz4 is measured in benchmarks/results, not asserted: it depends on the data).
 */
class CompressedExchangeTest {
  private static final long ROWS = 200_000;

  @TempDir
  static Path work;

  /** What one query's map tasks wrote, by Spark's shuffle-write metrics, and its answer. */
  private record Run(List<String> rows, long bytesWritten) {}

  private static Run run(SparkSession spark, boolean thallus) {
    AtomicLong written = new AtomicLong();
    SparkListener listener = new SparkListener() {
      @Override
      public void onTaskEnd(SparkListenerTaskEnd end) {
        if (end.taskType().equals("ShuffleMapTask") && end.taskMetrics() != null) {
          written.addAndGet(end.taskMetrics().shuffleWriteMetrics().bytesWritten());
        }
      }
    };
    spark.conf().set(ShuffleOptions.ENABLED, String.valueOf(thallus));
    spark.conf().set("spark.sql.adaptive.enabled", "false");
    drain(spark);
    spark.sparkContext().addSparkListener(listener);
    try {
      List<String> rows = ExchangeAnswers.rows(ThallusExchangeTest.syntheticPlan(spark, ROWS));
      drain(spark);
      return new Run(rows, written.get());
    } finally {
      spark.sparkContext().removeSparkListener(listener);
      spark.conf().unset(ShuffleOptions.ENABLED);
      spark.conf().unset("spark.sql.adaptive.enabled");
    }
  }

  private static void drain(SparkSession spark) {
    try {
      spark.sparkContext().listenerBus().waitUntilEmpty(120_000);
    } catch (java.util.concurrent.TimeoutException e) {
      throw new AssertionError("Spark's listener bus did not drain in 2 minutes", e);
    }
  }

  private static TestCluster cluster(String compression) throws Exception {
    return TestCluster.builder().exchangeStore("tcp").conf(ShuffleOptions.EXCHANGE_COMPRESSION, compression)
        .start(work.resolve(compression));
  }

  @Test
  void lz4OverTcpAnswersAsSparkAndWritesFewerBytesThanUncompressed() throws Exception {
    Run compressed;
    Run spark;
    try (TestCluster cluster = cluster("lz4")) {
      compressed = run(cluster.spark, true);
      spark = run(cluster.spark, false);
    }
    Run plain;
    try (TestCluster cluster = cluster("none")) {
      plain = run(cluster.spark, true);
    }
    assertThat(compressed.rows()).hasSize((int) ROWS).isEqualTo(spark.rows()).isEqualTo(plain.rows());
    assertThat(compressed.bytesWritten()).as("lz4 exchange bytes (uncompressed %d, Spark's lz4 %d)",
        plain.bytesWritten(), spark.bytesWritten()).isPositive().isLessThan(plain.bytesWritten());
  }

  /** One query's network messages for its reduce tasks, by the exchange's metrics, and its answer. */
  private record Messages(List<String> answer, long pushes, long pushFrames, long pullRequests, long pulledBatches) {
    static Messages of(SparkSession spark, String push) {
      spark.conf().set(ShuffleOptions.EXCHANGE_PUSH, push);
      spark.conf().set("spark.sql.adaptive.enabled", "false");
      try {
        Dataset<Row> rows = spark.range(0, 1_000_000, 1, 4).toDF().repartition(200, col("id")).selectExpr("SUM(id)");
        List<String> answer = ExchangeAnswers.rows(rows);
        // The task-end events carrying the metrics reach the driver before they are read.
        drain(spark);
        // The 200-partition exchange only (the sum's single-partition exchange after it is not the one measured).
        ThallusShuffleExchangeExec exchange = exchangeOf(rows.queryExecution().executedPlan(), 200);
        return new Messages(answer, metric(exchange, "pushes"), metric(exchange, "pushFrames"),
            metric(exchange, "pullRequests"), metric(exchange, "pulledBatches"));
      } finally {
        spark.conf().unset(ShuffleOptions.EXCHANGE_PUSH);
        spark.conf().unset("spark.sql.adaptive.enabled");
      }
    }

    private static long metric(ThallusShuffleExchangeExec exchange, String name) {
      return exchange.metrics().apply(name).value();
    }

    private static ThallusShuffleExchangeExec exchangeOf(SparkPlan plan, int partitions) {
      if (plan instanceof ThallusShuffleExchangeExec exchange && exchange.numPartitions() == partitions) {
        return exchange;
      }
      for (SparkPlan child : scala.jdk.javaapi.CollectionConverters.asJava(plan.children())) {
        ThallusShuffleExchangeExec found = exchangeOf(child, partitions);
        if (found != null) {
          return found;
        }
      }
      return null;
    }

    /** Control frames (pull requests) and bodies (push frames, pulled batches) per reduce task per peer. */
    double perTaskPerPeer(int reduceTasks, int peers) {
      return (double) (pushFrames + pullRequests + pulledBatches) / (reduceTasks * peers);
    }
  }

  /**
   * The messages target of the exchange, with compressed batches over tcp: at 200 partitions, 4 maps on 2 executors
   * (each reduce task has one peer), a pull of one partition from the peer is one request and one body (its maps'
   * compressed batches joined and compressed once), a push of one chunk is one body, so at most 2 per reduce task per
   * peer with push.
   */
  @Test
  void twoHundredPartitionsTakeAtMostTwoMessagesPerReduceTaskPerPeerCompressed() throws Exception {
    Messages pulled;
    Messages pushed;
    try (TestCluster cluster = cluster("lz4")) {
      pulled = Messages.of(cluster.spark, "off");
      pushed = Messages.of(cluster.spark, "on");
    }
    long expected = 1_000_000L * 999_999L / 2;
    int reduceTasks = 200;
    int peers = 1;
    System.out.printf("lz4 over tcp, 200 partitions, 4 maps, 2 executors: push %d pushes (%d frames) + %d pulls"
        + " (%d batches) = %.2f messages per reduce task per peer; pull alone %d pulls (%d batches) = %.2f%n",
        pushed.pushes(), pushed.pushFrames(), pushed.pullRequests(), pushed.pulledBatches(),
        pushed.perTaskPerPeer(reduceTasks, peers), pulled.pullRequests(), pulled.pulledBatches(),
        pulled.perTaskPerPeer(reduceTasks, peers));
    assertThat(pulled.answer()).isEqualTo(List.of("[" + expected + "]"));
    assertThat(pushed.answer()).isEqualTo(pulled.answer());
    assertThat(pulled.pushes()).isZero();
    assertThat(pulled.pullRequests()).isPositive().isLessThanOrEqualTo(reduceTasks * peers);
    assertThat(pulled.pulledBatches()).as("one body per pull").isEqualTo(pulled.pullRequests());
    assertThat(pushed.pushes()).isPositive();
    assertThat(pushed.pushFrames()).as("one body per push").isEqualTo(pushed.pushes());
    assertThat(pushed.pulledBatches()).as("one body per pull").isLessThanOrEqualTo(pushed.pullRequests());
    assertThat(pushed.perTaskPerPeer(reduceTasks, peers)).isLessThanOrEqualTo(2.0);
  }

  @Test
  void aCompressionSettingThatIsNoneOfTheChoicesIsRefusedNamingTheKey() {
    SparkConf conf = new SparkConf().set(ShuffleOptions.EXCHANGE_COMPRESSION, "snappy");
    assertThatThrownBy(() -> new ExchangeStore(conf)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(ShuffleOptions.EXCHANGE_COMPRESSION).hasMessageContaining("snappy");
    assertThat(ExchangeCompression.of("auto").codecFor("tcp")).isEqualTo(io.thallus.BatchCompression.LZ4_FRAME);
    assertThat(ExchangeCompression.of("AUTO").codecFor("shm")).isEqualTo(io.thallus.BatchCompression.NONE);
    assertThat(ExchangeCompression.of("auto").codecFor("cma")).isEqualTo(io.thallus.BatchCompression.NONE);
    assertThat(ExchangeCompression.of("zstd").codecFor("shm")).isEqualTo(io.thallus.BatchCompression.ZSTD);
  }
}
