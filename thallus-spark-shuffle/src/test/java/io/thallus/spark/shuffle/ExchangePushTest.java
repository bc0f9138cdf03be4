package io.thallus.spark.shuffle;

import static org.apache.spark.sql.functions.col;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.testing.Eventually;
import java.time.Duration;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.rpc.RpcEnv;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.scheduler.SparkListenerTaskStart;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec;
import org.apache.spark.sql.execution.adaptive.QueryStageExec;
import org.apache.spark.sql.internal.SQLConf;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The exchange store with push ({@code spark.thallus.shuffle.exchange.push=on}) on two executor JVMs over shm: map
 * tasks push each reduce partition's batches to the executor the driver assigned it, reducers run there and read the
 * pushed batches, pulling only the rest. Answers are compared with Spark's own shuffle on the same cluster; the
 * exchange's metrics prove that pushes were sent and read.
 */
class ExchangePushTest extends ClusterTest {
  ExchangePushTest() {
    super(TestCluster.builder().exchangeStore("shm"));
  }

  /** Both executors' endpoints are in the driver's directory before any shuffle is planned. */
  @BeforeAll
  void bothEndpointsRegistered() throws InterruptedException {
    long started = System.nanoTime();
    assertThat(cluster.awaitEndpointsRegistered().live(CollectionConverters.asJava(
        spark.sparkContext().getExecutorIds()))).hasSize(2);
    System.out.printf("both endpoints registered %d ms after the cluster was up%n",
        (System.nanoTime() - started) / 1_000_000);
  }

  @AfterEach
  void unset() {
    for (String key : List.of(ShuffleOptions.EXCHANGE_PUSH, "spark.sql.adaptive.enabled")) {
      spark.conf().unset(key);
    }
  }

  @ParameterizedTest(name = "AQE {0}")
  @ValueSource(booleans = {false, true})
  void syntheticPlanGivesSparksAnswerFromPushedBatches(boolean adaptive) {
    spark.conf().set(ShuffleOptions.EXCHANGE_PUSH, "on");
    spark.conf().set("spark.sql.adaptive.enabled", String.valueOf(adaptive));
    long started = System.nanoTime();
    ExchangeAnswers answers = ExchangeAnswers.of(spark, () -> ThallusExchangeTest.syntheticPlan(spark, 200_000));
    System.out.printf("synthetic plan, AQE %s: both answers in %d ms%n", adaptive,
        (System.nanoTime() - started) / 1_000_000);
    assertThat(answers.thallus).hasSize(200_000).isEqualTo(answers.spark);
    assertThat(answers.thallusPlan).contains("ThallusShuffleExchange");

    Counts counts = Counts.of(spark, () -> ThallusExchangeTest.syntheticPlan(spark, 200_000)
        .selectExpr("SUM(v)", "COUNT(DISTINCT k)", "MAX(s)"));
    System.out.printf("synthetic plan, AQE %s: %d pushes, %d pulls, %d pushed batches read, commits waited %d ms%n",
        adaptive, counts.pushes, counts.pullRequests, counts.pushedBatchesRead, counts.pushWaitNanos / 1_000_000);
    assertThat(counts.pushes).as("pushes sent").isPositive();
    assertThat(counts.pushedBatchesRead).as("pushed batches read").isPositive();
  }

  @Test
  void tpchQ3AndQ18GiveSparksAnswersWithPushAndAqe() throws Exception {
    TpchShapes.create(spark, work.resolve("tpch"), 20_000);
    spark.conf().set(ShuffleOptions.EXCHANGE_PUSH, "on");
    for (boolean adaptive : new boolean[] {true, false}) {
      spark.conf().set("spark.sql.adaptive.enabled", String.valueOf(adaptive));
      ExchangeAnswers.assertSparksAnswers(spark, "AQE " + adaptive, TpchShapes.Q3, TpchShapes.Q18);
    }
  }

  @Test
  void skewedJoinSplitsAndCoalescesWithPush() {
    spark.conf().set(ShuffleOptions.EXCHANGE_PUSH, "on");
    ExchangeAnswers answers = ExchangeAnswers.ofSkewedJoin(spark);
    assertThat(answers.thallus).isEqualTo(answers.spark).isNotEmpty();
    assertThat(answers.thallusPlan).contains("ThallusShuffleExchange");
  }

  /**
   * At 200 partitions each reduce task has one peer executor; the messages between them for it are the pushes a map
   * sent (chunks of many partitions) plus the reducer's pull requests: at most 2 per reduce task per peer, and push
   * needs far fewer pulls than pull alone.
   */
  @Test
  void twoHundredPartitionsTakeAtMostTwoMessagesPerReduceTaskPerPeer() {
    spark.conf().set("spark.sql.adaptive.enabled", "false");
    long expected = 1_000_000L * 999_999L / 2;
    java.util.function.Supplier<Dataset<Row>> query = () -> spark.range(0, 1_000_000, 1, 4).toDF()
        .repartition(200, col("id")).selectExpr("SUM(id)");

    spark.conf().set(ShuffleOptions.EXCHANGE_PUSH, "off");
    Counts pulled = Counts.of(spark, query);
    spark.conf().set(ShuffleOptions.EXCHANGE_PUSH, "on");
    Counts pushed = Counts.of(spark, query);
    assertThat(pulled.answer).isEqualTo(List.of("[" + expected + "]"));
    assertThat(pushed.answer).isEqualTo(pulled.answer);

    int reduceTasks = 200;
    int peers = 1;
    double perTaskPerPeer = (double) (pushed.pushes + pushed.pullRequests) / (reduceTasks * peers);
    double pullOnly = (double) pulled.pullRequests / (reduceTasks * peers);
    System.out.printf("200 partitions, 4 maps, 2 executors: push %d pushes + %d pulls = %.2f messages per reduce "
        + "task per peer (pull alone: %d pulls = %.2f); pushed batches read %d%n", pushed.pushes,
        pushed.pullRequests, perTaskPerPeer, pulled.pullRequests, pullOnly, pushed.pushedBatchesRead);
    assertThat(pulled.pushes).isZero();
    assertThat(pushed.pushes).isPositive();
    assertThat(pushed.pushedBatchesRead).isPositive();
    assertThat(pushed.pullRequests).isLessThan(pulled.pullRequests);
    assertThat(perTaskPerPeer).isLessThanOrEqualTo(2.0);
  }

  /**
   * One executor is kept busy by another job, so every task of the shuffle (maps and reducers) runs on the other:
   * half the partitions were pushed to the busy executor, and their reducers, scheduled away from it, read the map
   * outputs where they are (here: their own executor, after Spark's locality wait for the busy one) and give the
   * same answer; what was pushed is never read.
   */
  @Test
  void aReducerAwayFromItsPushTargetReadsTheMapOutputs() throws Exception {
    spark.conf().set("spark.sql.adaptive.enabled", "false");
    spark.conf().set(ShuffleOptions.EXCHANGE_PUSH, "on");
    TaskGate gate = TaskGate.at(work.resolve("busy-may-end"));
    AtomicReference<String> busy = new AtomicReference<>();
    Set<String> shuffleExecutors = ConcurrentHashMap.newKeySet();
    SparkListener listener = new SparkListener() {
      @Override
      public void onTaskStart(SparkListenerTaskStart start) {
        if (start.stageAttemptId() >= 0 && busy.get() == null) {
          busy.compareAndSet(null, start.taskInfo().executorId());
        }
      }

      @Override
      public void onTaskEnd(SparkListenerTaskEnd end) {
        if (!end.taskInfo().executorId().equals(busy.get())) {
          shuffleExecutors.add(end.taskInfo().executorId());
        }
      }
    };
    spark.sparkContext().addSparkListener(listener);
    CompletableFuture<List<Integer>> blocker = CompletableFuture.supplyAsync(() -> spark.range(0, 1, 1, 1)
        .mapPartitions((MapPartitionsFunction<Long, Integer>) rows -> {
          gate.await();
          return List.of(1).iterator();
        }, Encoders.INT()).collectAsList());
    try {
      Eventually.await("the blocking task started", Duration.ofMinutes(2), () -> busy.get() != null);
      Counts counts = Counts.of(spark, () -> spark.range(0, 100_000, 1, 4).toDF()
          .repartition(8, col("id")).selectExpr("SUM(id)", "COUNT(*)"));
      assertThat(counts.answer).isEqualTo(List.of("[" + (100_000L * 99_999L / 2) + ",100000]"));
      assertThat(shuffleExecutors).as("executors the shuffle ran on").hasSize(1).doesNotContain(busy.get());
      assertThat(counts.pushes).as("pushes to the busy executor").isPositive();
      assertThat(counts.pushedBatchesRead).as("pushed batches read").isZero();
    } finally {
      gate.open();
      blocker.get(2, TimeUnit.MINUTES);
      spark.sparkContext().removeSparkListener(listener);
    }
  }

  /** {@code auto}: a shuffle Spark estimates at most pushMaxBytes is pushed, a larger one pulled. */
  @Test
  void autoPushesShufflesEstimatedSmallAndPullsLargerOnes() {
    spark.conf().set("spark.sql.adaptive.enabled", "false");
    java.util.function.Supplier<Dataset<Row>> query = () -> spark.range(0, 100_000, 1, 4).toDF()
        .repartition(8, col("id")).selectExpr("SUM(id)");
    Counts small = Counts.of(spark, query);
    spark.conf().set(ShuffleOptions.EXCHANGE_PUSH_MAX_BYTES, "1k");
    try {
      Counts large = Counts.of(spark, query);
      assertThat(small.pushes).as("pushes of a shuffle estimated at 800 KB, under 128m").isPositive();
      assertThat(large.pushes).as("pushes of the same shuffle over a 1k bound").isZero();
      assertThat(large.answer).isEqualTo(small.answer).isEqualTo(List.of("[" + 100_000L * 99_999L / 2 + "]"));
    } finally {
      spark.conf().unset(ShuffleOptions.EXCHANGE_PUSH_MAX_BYTES);
    }
    // The plans alone (nothing runs): both shuffles of the benchmark's synthetic plan at 5M rows are pushed, a
    // shuffle of 50M longs (the exchange benchmark's size where pull won) is not.
    assertThat(pushPlans(spark.range(5_000_000).toDF().repartition(col("id"))
        .selectExpr("id * 7 + 3 AS v", "id % 1000 AS k").repartition(col("v")))).containsExactly(true, true);
    assertThat(pushPlans(spark.range(50_000_000).toDF().repartition(col("id")))).containsExactly(false);
    // Without an estimate (or with push off, or one partition) nothing is pushed; the planner decides that alone.
    ShuffleConf auto = new ShuffleConf(new SQLConf());
    assertThat(PushPlanner.plan(auto, spark.sparkContext(), 200, java.util.OptionalLong.empty())).isNull();
    assertThat(PushPlanner.plan(auto, spark.sparkContext(), 1, java.util.OptionalLong.of(1))).isNull();
    assertThat(PushPlanner.plan(auto, spark.sparkContext(), 200, java.util.OptionalLong.of(1)).targets()).hasSize(2);
  }

  /** Whether each Thallus exchange of the query's plan (AQE off) would push, from the top of the plan down. */
  private static List<Boolean> pushPlans(Dataset<Row> query) {
    List<Boolean> plans = new java.util.ArrayList<>();
    java.util.ArrayDeque<SparkPlan> nodes = new java.util.ArrayDeque<>(List.of(query.queryExecution().executedPlan()));
    while (!nodes.isEmpty()) {
      SparkPlan node = nodes.poll();
      if (node instanceof ThallusShuffleExchangeExec exchange) {
        plans.add(exchange.shuffleDependency().pushPlan() != null);
      }
      nodes.addAll(CollectionConverters.asJava(node.children()));
    }
    return plans;
  }

  @Test
  void pushSettingsAreCheckedNamingTheKey() {
    SQLConf conf = new SQLConf();
    ShuffleConf options = new ShuffleConf(conf);
    assertThat(options.pushMode()).isEqualTo(PushMode.AUTO);
    assertThat(options.pushMaxBytes()).isEqualTo(128L << 20);
    assertThat(options.pushCommitWait()).isEqualTo(Duration.ofSeconds(30));
    conf.setConfString(ShuffleOptions.EXCHANGE_PUSH, " ON ");
    assertThat(options.pushMode()).isEqualTo(PushMode.ON);
    conf.setConfString(ShuffleOptions.EXCHANGE_PUSH, "always");
    assertThatThrownBy(options::pushMode)
        .hasMessage("spark.thallus.shuffle.exchange.push must be one of auto, on, off, not 'always'");
    conf.setConfString(ShuffleOptions.EXCHANGE_PUSH_MAX_BYTES, "lots");
    assertThatThrownBy(options::pushMaxBytes).hasMessageContaining(ShuffleOptions.EXCHANGE_PUSH_MAX_BYTES);
    conf.setConfString(ShuffleOptions.EXCHANGE_PUSH_COMMIT_WAIT, "1h");
    assertThatThrownBy(options::pushCommitWait).hasMessageContaining(ShuffleOptions.EXCHANGE_PUSH_COMMIT_WAIT);
  }

  /**
   * A registration the driver does not believe (asked here over the driver's own RpcEnv, so it comes from the
   * executors' host): one naming an executor Spark does not know, and one naming a live executor on another host,
   * are refused with the reason, and the directory keeps the executors' own endpoints (the other tests show that
   * those are pushed to).
   */
  @Test
  void aRegistrationNamingAnUnknownExecutorOrAnotherHostIsRefused() throws InterruptedException {
    ExchangeDirectory directory = cluster.awaitEndpointsRegistered();
    List<String> alive = CollectionConverters.asJava(spark.sparkContext().getExecutorIds());
    List<ExecutorEndpoint> registered = directory.live(alive);
    RpcEnv driver = SparkEnv.get().rpcEnv();
    SparkConf conf = spark.sparkContext().getConf();

    assertThatThrownBy(() -> ExchangeDirectory.register(driver, conf,
        new ExecutorEndpoint("no-such-executor", "127.0.0.1", 4242)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("refused")
        .hasMessageEndingWith("executor no-such-executor is not one the driver knows as alive (no block manager of "
            + "that id)");
    ExecutorEndpoint live = registered.get(0);
    assertThatThrownBy(() -> ExchangeDirectory.register(driver, conf,
        new ExecutorEndpoint(live.executorId(), "127.0.0.2", live.port())))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageEndingWith("executor " + live.executorId() + " runs on " + live.host()
            + " (its block manager's host), not on 127.0.0.2");
    assertThat(directory.live(alive)).isEqualTo(registered);
  }

  @Test
  void pushTargetsAreContiguousRangesAndReducersPreferTheirs() {
    List<ExecutorEndpoint> executors = List.of(new ExecutorEndpoint("0", "h", 1000),
        new ExecutorEndpoint("1", "h", 1001), new ExecutorEndpoint("2", "g", 1002));
    PushPlan plan = new PushPlan(executors, 200, 0);
    assertThat(plan.target(0)).isEqualTo(executors.get(0));
    assertThat(plan.target(66)).isEqualTo(executors.get(0));
    assertThat(plan.target(67)).isEqualTo(executors.get(1));
    assertThat(plan.target(199)).isEqualTo(executors.get(2));
    assertThat(plan.holderOf(60, 80)).contains(executors.get(1));
    assertThat(plan.holderOf(60, 68)).contains(executors.get(0));
    assertThat(plan.addresses()).hasSize(200);
    assertThat(executors.get(2).taskLocation()).isEqualTo("executor_g_2");
    assertThatThrownBy(() -> new ExecutorEndpoint("3", "h", 0)).hasMessageContaining("port 0");
  }

  /** The exchange's push and pull counts of one query, summed over its Thallus exchanges, and its answer. */
  record Counts(List<String> answer, long pushes, long pullRequests, long pushedBatchesRead, long pushWaitNanos) {
    static Counts of(SparkSession session, java.util.function.Supplier<Dataset<Row>> query) {
      Dataset<Row> rows = query.get();
      List<String> answer = ExchangeAnswers.rows(rows);
      Set<ThallusShuffleExchangeExec> exchanges = Collections.newSetFromMap(new IdentityHashMap<>());
      collect(rows.queryExecution().executedPlan(), exchanges);
      assertThat(exchanges).as("Thallus exchanges in " + rows.queryExecution().executedPlan()).isNotEmpty();
      long pushes = 0;
      long pulls = 0;
      long read = 0;
      long waited = 0;
      for (ThallusShuffleExchangeExec exchange : exchanges) {
        pushes += exchange.metrics().apply("pushes").value();
        pulls += exchange.metrics().apply("pullRequests").value();
        read += exchange.metrics().apply("pushedBatchesRead").value();
        waited += exchange.metrics().apply("pushWaitTime").value();
        System.out.printf("  exchange of %d partitions, %s: %d bytes, %d rows, %d pushes, %d pulls, %d pushed batches"
            + " read%n", exchange.numPartitions(), exchange.outputPartitioning(),
            exchange.metrics().apply("dataSize").value(),
            exchange.metrics().apply("shuffleRecordsWritten").value(), exchange.metrics().apply("pushes").value(),
            exchange.metrics().apply("pullRequests").value(), exchange.metrics().apply("pushedBatchesRead").value());
      }
      return new Counts(answer, pushes, pulls, read, waited);
    }

    /** One metric of the exchange store, summed over the Thallus exchanges of an executed plan. */
    static long sum(SparkPlan plan, String metric) {
      Set<ThallusShuffleExchangeExec> exchanges = Collections.newSetFromMap(new IdentityHashMap<>());
      collect(plan, exchanges);
      return exchanges.stream().mapToLong(exchange -> exchange.metrics().apply(metric).value()).sum();
    }

    private static void collect(SparkPlan plan, Set<ThallusShuffleExchangeExec> into) {
      if (plan instanceof ThallusShuffleExchangeExec exchange) {
        into.add(exchange);
      }
      if (plan instanceof AdaptiveSparkPlanExec adaptive) {
        collect(adaptive.executedPlan(), into);
      }
      if (plan instanceof QueryStageExec stage) {
        collect(stage.plan(), into);
      }
      for (SparkPlan child : CollectionConverters.asJava(plan.children())) {
        collect(child, into);
      }
    }
  }
}
