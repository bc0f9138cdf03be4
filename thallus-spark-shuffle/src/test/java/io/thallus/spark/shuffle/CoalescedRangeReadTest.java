package io.thallus.spark.shuffle;

import static org.apache.spark.sql.functions.col;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.adaptive.AQEShuffleReadExec;
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec;
import org.apache.spark.sql.execution.adaptive.QueryStageExec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import scala.jdk.javaapi.CollectionConverters;

/**
 * AQE coalescing on (Spark's default) with push off, on two executor JVMs over tcp: a reduce task that reads a range
 * of the 200 partitions pulls the whole range from its peer with one request, answered with one body while the range
 * fits the join bound, so the messages per reduce task per peer do not grow with the partitions it coalesced.
 */
class CoalescedRangeReadTest extends ClusterTest {
  /** AQE's settings that make it coalesce the 200 partitions into ranges of a few each (by size, not parallelism). */
  private static final Map<String, String> COALESCING = Map.of(
      "spark.sql.adaptive.enabled", "true",
      "spark.sql.shuffle.partitions", "200",
      "spark.sql.adaptive.coalescePartitions.parallelismFirst", "false",
      "spark.sql.adaptive.advisoryPartitionSizeInBytes", "256k",
      ShuffleOptions.EXCHANGE_PUSH, "off");

  CoalescedRangeReadTest() {
    super(TestCluster.builder().exchangeStore("tcp"));
  }

  @AfterEach
  void unset() {
    COALESCING.keySet().forEach(spark.conf()::unset);
  }

  @Test
  void aCoalescedRangeIsOnePullPerPeerAndGivesSparksAnswer() {
    COALESCING.forEach(spark.conf()::set);
    Supplier<Dataset<Row>> query = () -> spark.range(0, 400_000, 1, 4)
        // No partition count: a repartition by key alone is one AQE may coalesce (a fixed count is kept as asked).
        .selectExpr("id", "id % 1000 AS k", "CONCAT('s-', id) AS s").repartition(col("k"));
    ExchangeAnswers answers = ExchangeAnswers.of(spark, query);
    assertThat(answers.thallus).hasSize(400_000).isEqualTo(answers.spark);
    assertThat(answers.thallusPlan).contains("ThallusShuffleExchange");

    Dataset<Row> rows = query.get();
    ExchangeAnswers.rows(rows);
    drain(spark);
    SparkPlan plan = rows.queryExecution().executedPlan();
    ThallusShuffleExchangeExec exchange = exchangeOf(plan);
    assertThat(exchange).as("the 200-partition Thallus exchange in " + plan).isNotNull();
    int reduceTasks = reduceTasks(plan);
    int peers = 1;
    long pulls = exchange.metrics().apply("pullRequests").value();
    long bodies = exchange.metrics().apply("pulledBatches").value();
    System.out.printf("AQE coalescing, push off, 200 partitions, 4 maps, 2 executors: %d reduce tasks, %d pull "
        + "requests, %d bodies = %.2f messages per reduce task per peer (one pull per partition would be up to %d)%n",
        reduceTasks, pulls, bodies, (double) (pulls + bodies) / (reduceTasks * peers), 200 * peers);
    assertThat(reduceTasks).as("AQE coalesced the 200 partitions").isLessThan(200);
    assertThat(pulls).as("pull requests per reduce task per peer").isPositive()
        .isLessThanOrEqualTo((long) reduceTasks * peers);
    assertThat(bodies).as("one body per pull under the join bound").isEqualTo(pulls);
  }

  /** Range partitioning read through coalesced ranges: Spark's rows in Spark's order. */
  @Test
  void anOrderByReadThroughCoalescedRangesGivesSparksOrder() {
    COALESCING.forEach(spark.conf()::set);
    ExchangeAnswers answers = ExchangeAnswers.inOrder(spark, () -> spark.range(0, 200_000, 1, 4)
        .selectExpr("id % 977 AS k", "id").orderBy(col("k").desc(), col("id")));
    assertThat(answers.thallus).hasSize(200_000).isEqualTo(answers.spark);
    assertThat(answers.thallusPlan).contains("ThallusShuffleExchange rangepartitioning");
  }

  private static void drain(SparkSession spark) {
    try {
      spark.sparkContext().listenerBus().waitUntilEmpty(120_000);
    } catch (java.util.concurrent.TimeoutException e) {
      throw new AssertionError("Spark's listener bus did not drain in 2 minutes", e);
    }
  }

  /** The reduce tasks that read the exchange: AQE's read's partition specs, or one per partition without one. */
  private static int reduceTasks(SparkPlan plan) {
    for (SparkPlan node : nodes(plan)) {
      if (node instanceof AQEShuffleReadExec read) {
        return read.partitionSpecs().size();
      }
    }
    return 200;
  }

  private static ThallusShuffleExchangeExec exchangeOf(SparkPlan plan) {
    for (SparkPlan node : nodes(plan)) {
      if (node instanceof ThallusShuffleExchangeExec exchange && exchange.numPartitions() == 200) {
        return exchange;
      }
    }
    return null;
  }

  /** Every node of an executed plan, through AQE's wrappers and query stages. */
  private static List<SparkPlan> nodes(SparkPlan plan) {
    List<SparkPlan> all = new java.util.ArrayList<>();
    java.util.ArrayDeque<SparkPlan> toVisit = new java.util.ArrayDeque<>(List.of(plan));
    while (!toVisit.isEmpty()) {
      SparkPlan node = toVisit.poll();
      all.add(node);
      if (node instanceof AdaptiveSparkPlanExec adaptive) {
        toVisit.add(adaptive.executedPlan());
      }
      if (node instanceof QueryStageExec stage) {
        toVisit.add(stage.plan());
      }
      toVisit.addAll(CollectionConverters.asJava(node.children()));
    }
    return all;
  }
}
