package io.thallus.spark.shuffle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.SparkConf;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.SparkSession;
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
