package io.thallus.spark.shuffle;

import static org.apache.spark.sql.functions.col;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * The Thallus exchange on two executor JVMs, each answer compared with the same query on Spark's own exchange.
 */
class ThallusExchangeTest extends ClusterTest {
  private boolean tpchMade;

  ThallusExchangeTest() {
    super(TestCluster.builder());
  }

  /** The research's synthetic plan: shuffle by a key, project, shuffle again. */
  static Dataset<Row> syntheticPlan(SparkSession session, long rows) {
    return session.range(rows).toDF()
        .repartition(col("id"))
        .selectExpr("id * 7 + 3 AS v", "id % 1000 AS k", "CAST(id AS STRING) AS s")
        .repartition(col("v"));
  }

  @ParameterizedTest(name = "AQE {0}")
  @ValueSource(booleans = {false, true})
  void syntheticPlanGivesSparksAnswer(boolean adaptive) {
    spark.conf().set("spark.sql.adaptive.enabled", String.valueOf(adaptive));
    try {
      ExchangeAnswers answers = ExchangeAnswers.of(spark, () -> syntheticPlan(spark, 200_000));
      assertThat(answers.thallus).hasSize(200_000).isEqualTo(answers.spark);
      assertThat(answers.thallusPlan).contains("ThallusShuffleExchange");

      // A global aggregate: its partial results cross a single-partition exchange, the Thallus one too.
      ExchangeAnswers total = ExchangeAnswers.of(spark,
          () -> syntheticPlan(spark, 200_000).selectExpr("SUM(v)", "COUNT(DISTINCT k)", "MAX(s)"));
      assertThat(total.thallus).hasSize(1).isEqualTo(total.spark);
      assertThat(total.thallusPlan.lines().filter(line -> line.contains("ThallusShuffleExchange SinglePartition")))
          .isNotEmpty();
    } finally {
      spark.conf().unset("spark.sql.adaptive.enabled");
    }
  }

  @Test
  void everyClaimedTypeCrossesWithItsValuesAndNulls() {
    String sql = TypedRows.EVERY_CLAIMED_TYPE;
    ExchangeAnswers answers = ExchangeAnswers.of(spark,
        () -> spark.sql(sql).repartition(7, col("i"), col("s")).selectExpr("*", "HEX(bin) AS hex").drop("bin"));
    assertThat(answers.thallus).hasSize(20_000).isEqualTo(answers.spark);
    assertThat(answers.thallusPlan).contains("ThallusShuffleExchange");
  }

  @Test
  void nestedTypesAndRoundRobinStayWithSparksExchange() {
    ExchangeAnswers nested = ExchangeAnswers.of(spark,
        () -> spark.sql("SELECT id, ARRAY(id, id + 1) AS a FROM range(5000)").repartition(col("id")));
    assertThat(nested.thallus).isEqualTo(nested.spark).hasSize(5000);
    assertThat(nested.thallusPlan).doesNotContain("ThallusShuffleExchange").contains("Exchange hashpartitioning");

    ExchangeAnswers roundRobin = ExchangeAnswers.of(spark, () -> spark.range(5000).toDF().repartition(3));
    assertThat(roundRobin.thallus).isEqualTo(roundRobin.spark);
    assertThat(roundRobin.thallusPlan).doesNotContain("ThallusShuffleExchange");
  }

  @ParameterizedTest(name = "AQE {0}")
  @ValueSource(booleans = {false, true})
  void aJoinOfSparksExchangeWithTheThallusExchangeMatchesPartitions(boolean adaptive) {
    // One side has an array column (Spark's exchange), the other is flat (Thallus's): the join is right only if
    // both put every key in the same partition.
    spark.conf().set("spark.sql.adaptive.enabled", String.valueOf(adaptive));
    try {
      ExchangeAnswers answers = ExchangeAnswers.of(spark, () -> {
        Dataset<Row> nested = spark.sql("SELECT id % 3000 AS k, ARRAY(id) AS a FROM range(6000)");
        Dataset<Row> flat = spark.sql("SELECT id AS k, CONCAT('v', id) AS v, CAST(id AS DECIMAL(10,1)) AS d "
            + "FROM range(0, 6000, 2)");
        return nested.join(flat, "k");
      });
      assertThat(answers.thallus).hasSize(3000).isEqualTo(answers.spark);
      assertThat(answers.thallusPlan).contains("ThallusShuffleExchange").contains("Exchange hashpartitioning");
    } finally {
      spark.conf().unset("spark.sql.adaptive.enabled");
    }
  }

  @ParameterizedTest(name = "AQE {0}")
  @ValueSource(booleans = {false, true})
  void tpchQ3Q9Q18GiveSparksAnswers(boolean adaptive) throws Exception {
    if (!tpchMade) {
      TpchShapes.create(spark, work.resolve("tpch"), 20_000);
      tpchMade = true;
    }
    spark.conf().set("spark.sql.adaptive.enabled", String.valueOf(adaptive));
    try {
      ExchangeAnswers.assertSparksAnswers(spark, "AQE " + adaptive, TpchShapes.Q3, TpchShapes.Q9, TpchShapes.Q18);
    } finally {
      spark.conf().unset("spark.sql.adaptive.enabled");
    }
  }

  @Test
  void unregisteringTheShuffleRemovesItsFilesOnTheExecutors() throws Exception {
    spark.conf().set("spark.sql.adaptive.enabled", "false");
    try {
      Dataset<Row> shuffled = spark.range(0, 50_000, 1, 3).toDF().repartition(5, col("id"));
      assertThat(shuffled.collectAsList()).hasSize(50_000);
      int shuffleId = thallusShuffleId(shuffled.queryExecution().executedPlan());
      assertThat(shuffleFiles(shuffleId)).as("map outputs of shuffle " + shuffleId).isNotEmpty();
      // What Spark's context cleaner does when the shuffle's dependency is collected.
      spark.sparkContext().cleaner().get().doCleanupShuffle(shuffleId, true);
      io.thallus.testing.Eventually.await("shuffle " + shuffleId + "'s files removed", java.time.Duration.ofMinutes(1),
          () -> shuffleFiles(shuffleId).isEmpty());
    } finally {
      spark.conf().unset("spark.sql.adaptive.enabled");
    }
  }

  static int thallusShuffleId(org.apache.spark.sql.execution.SparkPlan plan) {
    if (plan instanceof ThallusShuffleExchangeExec exchange) {
      return exchange.shuffleId();
    }
    for (org.apache.spark.sql.execution.SparkPlan child
        : scala.jdk.javaapi.CollectionConverters.asJava(plan.children())) {
      int id = thallusShuffleId(child);
      if (id >= 0) {
        return id;
      }
    }
    return -1;
  }

  private java.util.List<Path> shuffleFiles(int shuffleId) {
    try (java.util.stream.Stream<Path> files = java.nio.file.Files.walk(cluster.localDirs)) {
      return files.filter(f -> f.getFileName().toString().startsWith("shuffle_" + shuffleId + "_")).toList();
    } catch (java.io.IOException | java.io.UncheckedIOException e) {
      // A directory removed while walked: look again.
      return java.util.List.of(Path.of("retry"));
    }
  }

  @Test
  void skewedJoinSplitsAndCoalescesWithAqe() {
    ExchangeAnswers answers = ExchangeAnswers.ofSkewedJoin(spark);
    assertThat(answers.thallus).isEqualTo(answers.spark).isNotEmpty();
    assertThat(answers.thallusPlan).contains("ThallusShuffleExchange");
  }
}
