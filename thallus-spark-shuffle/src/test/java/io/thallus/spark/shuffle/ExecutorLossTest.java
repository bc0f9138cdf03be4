package io.thallus.spark.shuffle;

import static org.apache.spark.sql.functions.col;
import static org.assertj.core.api.Assertions.assertThat;

import io.thallus.testing.Eventually;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * An executor holding map output of a Thallus exchange dies while the reducers wait: Spark must recompute the lost
 * map output (its MapStatus pointed at the dead executor's block manager) and the job must still give the answer.
 */
class ExecutorLossTest {
  private static final int MAP_TASKS = 4;
  private static final long ROWS = 200_000;

  @TempDir
  Path work;

  /**
   * With {@code store=exchange} the output lives in the killed executor's endpoint: the reducers, which asked the
   * tracker before the kill, fail to pull from it, and their FetchFailedException has Spark run the maps again.
   * With {@code exchange+push} the killed executor's maps also pushed to the survivor: the survivor's reducers read
   * those pushes, the killed executor's reducers run again, find its outputs gone and have Spark rerun its maps.
   */
  @ParameterizedTest(name = "store {0}")
  @ValueSource(strings = {"spark", "exchange", "exchange+push"})
  void aKilledExecutorsMapOutputIsRecomputedAndTheAnswerHolds(String store) throws Exception {
    boolean push = store.endsWith("+push");
    try (TestCluster cluster = TestCluster.builder().conf(ShuffleOptions.STORE, push ? "exchange" : store)
        .conf(ShuffleOptions.EXCHANGE_TRANSPORT, "shm").start(work)) {
      SparkSession spark = cluster.spark;
      spark.conf().set("spark.sql.adaptive.enabled", "false");
      spark.conf().set(ShuffleOptions.EXCHANGE_PUSH, push ? "on" : "off");
      if (push) {
        cluster.awaitEndpointsRegistered();
      }
      Set<String> mapExecutors = ConcurrentHashMap.newKeySet();
      AtomicInteger mapTasksDone = new AtomicInteger();
      AtomicLong killedAt = new AtomicLong(Long.MAX_VALUE);
      AtomicInteger mapTasksAfterKill = new AtomicInteger();
      spark.sparkContext().addSparkListener(new SparkListener() {
        @Override
        public void onTaskEnd(SparkListenerTaskEnd end) {
          if (end.taskType().equals("ShuffleMapTask") && end.taskInfo().successful()) {
            mapExecutors.add(end.taskInfo().executorId());
            mapTasksDone.incrementAndGet();
            if (end.taskInfo().launchTime() > killedAt.get()) {
              mapTasksAfterKill.incrementAndGet();
            }
          }
        }
      });
      TaskGate gate = TaskGate.at(work.resolve("reducers-may-go"));
      org.apache.spark.sql.Dataset<Long> sumsPerReducer = spark.range(0, ROWS, 1, MAP_TASKS)
          .toDF()
          .repartition(MAP_TASKS, col("id"))
          .mapPartitions((MapPartitionsFunction<Row, Long>) rows -> {
            // Each reducer waits until the driver has killed an executor holding map output.
            gate.await();
            long sum = 0;
            while (rows.hasNext()) {
              sum += rows.next().getLong(0);
            }
            return List.of(sum).iterator();
          }, Encoders.LONG());
      CompletableFuture<List<Long>> job = CompletableFuture.supplyAsync(sumsPerReducer::collectAsList);

      Eventually.await("the map stage's " + MAP_TASKS + " tasks", Duration.ofMinutes(3),
          () -> mapTasksDone.get() >= MAP_TASKS);
      String victim = mapExecutors.iterator().next();
      killedAt.set(System.currentTimeMillis());
      assertThat(spark.sparkContext().killExecutor(victim)).isTrue();
      Eventually.await("executor " + victim + " gone", Duration.ofMinutes(2),
          () -> spark.sparkContext().statusTracker().getExecutorInfos().length == 2);
      gate.open();

      List<Long> sums = job.get(5, TimeUnit.MINUTES);
      assertThat(sums.stream().mapToLong(Long::longValue).sum()).isEqualTo(ROWS * (ROWS - 1) / 2);
      assertThat(mapTasksAfterKill.get()).as("map tasks rerun after the kill").isPositive();
      if (push) {
        assertThat(ExchangePushTest.Counts.sum(sumsPerReducer.queryExecution().executedPlan(), "pushes"))
            .as("pushes sent before and after the kill").isPositive();
      }
      assertThat(spark.range(0, ROWS, 1, MAP_TASKS).toDF().repartition(MAP_TASKS, col("id"))
          .queryExecution().executedPlan().toString()).contains("ThallusShuffleExchange");
    }
  }
}
