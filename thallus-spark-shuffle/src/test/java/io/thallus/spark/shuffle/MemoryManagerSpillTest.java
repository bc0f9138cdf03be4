package io.thallus.spark.shuffle;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Without {@link ShuffleOptions#SPILL_THRESHOLD}, Spark's memory manager alone bounds a map task's frames: with
 * executors whose execution memory is under a megabyte ({@code spark.memory.fraction}), the Thallus exchange's map
 * tasks get less than their output from it and spill, and the answer is still Spark's.
 */
class MemoryManagerSpillTest {
  @TempDir
  Path work;

  @Test
  void mapTasksSpillBeyondWhatSparksMemoryManagerGrants() throws Exception {
    // Spark's test mode (SPARK_TESTING, set for the executors) reserves no memory: the pool is this fraction of
    // the executor's heap (768m), about 0.7 MB.
    // Spark's floor below which spillable memory does not spill (5m) lowered too, as the pool is.
    try (TestCluster cluster = TestCluster.builder().conf("spark.memory.fraction", "0.001")
        .conf("spark.shuffle.spill.initialMemoryThreshold", "64k").start(work)) {
      SparkSession spark = cluster.spark;
      AtomicLong diskBytesSpilled = new AtomicLong();
      spark.sparkContext().addSparkListener(new SparkListener() {
        @Override
        public void onTaskEnd(SparkListenerTaskEnd end) {
          if (end.taskType().equals("ShuffleMapTask") && end.taskMetrics() != null) {
            diskBytesSpilled.addAndGet(end.taskMetrics().diskBytesSpilled());
          }
        }
      });
      spark.conf().set(ShuffleOptions.ENABLED, "false");
      List<String> expected = ExchangeAnswers.rows(ThallusExchangeTest.syntheticPlan(spark, 200_000));
      drain(spark);
      long sparksOwn = diskBytesSpilled.get();
      spark.conf().set(ShuffleOptions.ENABLED, "true");
      Dataset<Row> thallus = ThallusExchangeTest.syntheticPlan(spark, 200_000);
      assertThat(ExchangeAnswers.rows(thallus)).hasSize(200_000).isEqualTo(expected);
      drain(spark);
      assertThat(thallus.queryExecution().executedPlan().toString()).contains("ThallusShuffleExchange");
      assertThat(diskBytesSpilled.get()).as("bytes the exchange's map tasks spilled").isGreaterThan(sparksOwn);
    }
  }

  private static void drain(SparkSession spark) throws TimeoutException {
    spark.sparkContext().listenerBus().waitUntilEmpty(120_000);
  }
}
