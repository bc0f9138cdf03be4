package io.thallus.spark.shuffle;

import static org.apache.spark.sql.functions.col;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.stream.Stream;
import io.thallus.testing.Eventually;
import org.apache.spark.SparkConf;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Map tasks of the Thallus exchange that spill: on two executor JVMs whose map tasks may keep only 16 KiB of frames
 * on the heap ({@link ShuffleOptions#SPILL_THRESHOLD}), so every map task writes many spill runs and assembles each
 * partition from them. Answers are compared with Spark's own exchange; Spark's spill metrics must show the spills,
 * and no spill file may outlive its task, whether the task succeeds or fails.
 */
class MapOutputSpillTest {
  @TempDir
  static Path work;
  private static TestCluster cluster;
  private static SparkSession spark;
  private static final AtomicLong memoryBytesSpilled = new AtomicLong();
  private static final AtomicLong diskBytesSpilled = new AtomicLong();
  /** Temporary files other test classes' clusters may have left in the shared local dirs: not this class's. */
  private static List<Path> filesBefore;

  @BeforeAll
  static void start() throws Exception {
    cluster = TestCluster.builder().conf(ShuffleOptions.SPILL_THRESHOLD, "16k")
        // The failing query below fails at once rather than after Spark's four attempts.
        .conf("spark.task.maxFailures", "1").start(work);
    spark = cluster.spark;
    filesBefore = List.of();
    filesBefore = spillFiles();
    spark.sparkContext().addSparkListener(new SparkListener() {
      @Override
      public void onTaskEnd(SparkListenerTaskEnd end) {
        if (end.taskType().equals("ShuffleMapTask") && end.taskMetrics() != null) {
          memoryBytesSpilled.addAndGet(end.taskMetrics().memoryBytesSpilled());
          diskBytesSpilled.addAndGet(end.taskMetrics().diskBytesSpilled());
        }
      }
    });
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @BeforeEach
  void adaptiveOn() {
    spark.conf().set("spark.sql.adaptive.enabled", "true");
  }

  @Test
  void spillingMapTasksGiveSparksAnswersAndRecordTheirSpills() throws Exception {
    assertSpillsAndSparksAnswer("synthetic plan", () -> ThallusExchangeTest.syntheticPlan(spark, 200_000));
    TpchShapes.create(spark, work.resolve("tpch"), 20_000);
    for (String query : new String[] {TpchShapes.Q3, TpchShapes.Q9, TpchShapes.Q18}) {
      assertSpillsAndSparksAnswer(query, () -> spark.sql(query));
    }
    assertThat(spillFiles()).as("spill files left in the executors' local dirs").isEmpty();
  }

  @Test
  void aMapTaskThatFailsAfterSpillingLeavesNoSpillFile() throws Exception {
    Dataset<Row> failing = spark.range(0, 200_000, 1, 2).toDF()
        .selectExpr("id", "CASE WHEN id % 100000 = 90000 THEN CAST(RAISE_ERROR('the map task fails here') AS BIGINT)"
            + " ELSE id * 3 END AS v", "CONCAT('row-', id) AS s")
        .repartition(col("v"));
    spark.conf().set(ShuffleOptions.ENABLED, "true");
    drainListeners();
    long diskBefore = diskBytesSpilled.get();
    assertThatThrownBy(failing::collectAsList).hasStackTraceContaining("the map task fails here");
    drainListeners();
    assertThat(failing.queryExecution().executedPlan().toString()).contains("ThallusShuffleExchange");
    // Both map tasks fail after 90000 rows; a failed attempt reports its metrics too: it had spilled first.
    assertThat(diskBytesSpilled.get()).as("bytes spilled by the failing map tasks").isGreaterThan(diskBefore);
    // The job fails with the first failed task; Spark then kills the other, which ends (and removes its files) soon.
    Eventually.await("no spill file once the map tasks have ended", Duration.ofMinutes(1),
        () -> spillFiles().isEmpty());
  }

  @Test
  void aKilledMapTaskLeavesNoSpillFile() throws Exception {
    spark.conf().set(ShuffleOptions.ENABLED, "true");
    // Any spill file seen below is then this job's.
    Eventually.await("no spill file before the job", Duration.ofMinutes(1), () -> spillFiles().isEmpty());
    String group = "killed-after-spilling";
    // Each map task passes 90000 rows to the exchange (which spills them), then waits to be killed (with a deadline).
    CompletableFuture<List<Long>> job = CompletableFuture.supplyAsync(() -> {
      spark.sparkContext().setJobGroup(group, "map tasks killed after spilling", true);
      return spark.range(0, 200_000, 1, 2).toDF()
          .mapPartitions((MapPartitionsFunction<Row, Long>) rows -> new WaitAfter(rows, 90_000), Encoders.LONG())
          .repartition(col("value"))
          .as(Encoders.LONG())
          .collectAsList();
    });
    Eventually.await("the map tasks' spill files", Duration.ofMinutes(2), () -> !spillFiles().isEmpty());
    spark.sparkContext().cancelJobGroup(group);
    assertThatThrownBy(() -> job.get(2, TimeUnit.MINUTES)).hasStackTraceContaining("cancel");
    Eventually.await("no spill file after the kill", Duration.ofMinutes(1), () -> spillFiles().isEmpty());
  }

  /** Passes {@code rows} on as longs, and after {@code count} of them waits until the task is killed. */
  private static final class WaitAfter implements Iterator<Long> {
    private final Iterator<Row> rows;
    private final long count;
    private long passed;

    WaitAfter(Iterator<Row> rows, long count) {
      this.rows = rows;
      this.count = count;
    }

    @Override
    public boolean hasNext() {
      if (passed == count) {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
        while (System.nanoTime() < deadline) {
          TaskContext.get().killTaskIfInterrupted();
          try {
            Thread.sleep(20);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            TaskContext.get().killTaskIfInterrupted();
          }
        }
        throw new IllegalStateException("The map task was never killed");
      }
      return rows.hasNext();
    }

    @Override
    public Long next() {
      passed++;
      return rows.next().getLong(0);
    }
  }

  @Test
  void aBadThresholdIsRefusedNamingTheKey() {
    assertThat(SparkBlockStore.spillThreshold(new SparkConf())).isEqualTo(Long.MAX_VALUE);
    assertThat(SparkBlockStore.spillThreshold(new SparkConf().set(ShuffleOptions.SPILL_THRESHOLD, " 64m ")))
        .isEqualTo(64L << 20);
    assertThatThrownBy(() -> SparkBlockStore.spillThreshold(
        new SparkConf().set(ShuffleOptions.SPILL_THRESHOLD, "lots")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("spark.thallus.shuffle.spill.threshold must be a size such as 64m, not 'lots'");
    assertThatThrownBy(() -> SparkBlockStore.spillThreshold(
        new SparkConf().set(ShuffleOptions.SPILL_THRESHOLD, "100b")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("spark.thallus.shuffle.spill.threshold must be at least 1k, not 100 bytes");
  }

  /** Spark's answer, then the Thallus exchange's, whose map tasks must have spilled (by Spark's metrics). */
  private static void assertSpillsAndSparksAnswer(String name, Supplier<Dataset<Row>> query) {
    spark.conf().set(ShuffleOptions.ENABLED, "false");
    List<String> expected = ExchangeAnswers.rows(query.get());
    spark.conf().set(ShuffleOptions.ENABLED, "true");
    drainListeners();
    long memoryBefore = memoryBytesSpilled.get();
    long diskBefore = diskBytesSpilled.get();
    Dataset<Row> thallus = query.get();
    List<String> answer = ExchangeAnswers.rows(thallus);
    drainListeners();
    assertThat(answer).as(name).isNotEmpty().isEqualTo(expected);
    assertThat(thallus.queryExecution().executedPlan().toString()).as(name).contains("ThallusShuffleExchange");
    assertThat(memoryBytesSpilled.get()).as(name + ": memory bytes spilled").isGreaterThan(memoryBefore);
    assertThat(diskBytesSpilled.get()).as(name + ": disk bytes spilled").isGreaterThan(diskBefore);
  }

  /** Waits (with a deadline) until the driver's listeners have seen every task end posted so far. */
  private static void drainListeners() {
    try {
      spark.sparkContext().listenerBus().waitUntilEmpty(120_000);
    } catch (java.util.concurrent.TimeoutException e) {
      throw new AssertionError("Spark's listener bus did not drain in 2 minutes", e);
    }
  }

  /** Spark names temporary shuffle files temp_shuffle_<uuid>; its own sort shuffle removes its own too. */
  private static List<Path> spillFiles() {
    while (true) {
      try (Stream<Path> files = Files.walk(cluster.localDirs)) {
        return files.filter(f -> f.getFileName().toString().startsWith("temp_shuffle_"))
            .filter(f -> !filesBefore.contains(f)).toList();
      } catch (UncheckedIOException e) {
        // A file removed while the walk passed it (a task ending now): look again.
        if (!(e.getCause() instanceof java.nio.file.NoSuchFileException)) {
          throw e;
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
