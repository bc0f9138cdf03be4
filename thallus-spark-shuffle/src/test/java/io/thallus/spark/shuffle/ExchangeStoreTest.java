package io.thallus.spark.shuffle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.apache.spark.SparkConf;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The Thallus exchange with {@code spark.thallus.shuffle.store=exchange} on two executor JVMs: map outputs stay in
 * each executor's exchange endpoint and reducers pull them over shm. Each answer is compared with the same query
 * on Spark's own exchange (same cluster, {@code spark.thallus.shuffle.enabled=false}).
 */
class ExchangeStoreTest extends ClusterTest {
  ExchangeStoreTest() {
    super(TestCluster.builder().exchangeStore("shm"));
  }

  @ParameterizedTest(name = "AQE {0}")
  @ValueSource(booleans = {false, true})
  void syntheticPlanGivesSparksAnswer(boolean adaptive) {
    spark.conf().set("spark.sql.adaptive.enabled", String.valueOf(adaptive));
    try {
      ExchangeAnswers answers = ExchangeAnswers.of(spark,
          () -> ThallusExchangeTest.syntheticPlan(spark, 200_000));
      assertThat(answers.thallus).hasSize(200_000).isEqualTo(answers.spark);
      assertThat(answers.thallusPlan).contains("ThallusShuffleExchange");

      ExchangeAnswers total = ExchangeAnswers.of(spark,
          () -> ThallusExchangeTest.syntheticPlan(spark, 200_000).selectExpr("SUM(v)", "COUNT(DISTINCT k)", "MAX(s)"));
      assertThat(total.thallus).hasSize(1).isEqualTo(total.spark);
    } finally {
      spark.conf().unset("spark.sql.adaptive.enabled");
    }
  }

  @Test
  void tpchQ3AndQ18GiveSparksAnswersWithAqe() throws Exception {
    TpchShapes.create(spark, work.resolve("tpch"), 20_000);
    spark.conf().set("spark.sql.adaptive.enabled", "true");
    try {
      ExchangeAnswers.assertSparksAnswers(spark, "AQE on", TpchShapes.Q3, TpchShapes.Q18);
    } finally {
      spark.conf().unset("spark.sql.adaptive.enabled");
    }
  }

  @Test
  void skewedJoinSplitsAndCoalescesWithAqe() {
    ExchangeAnswers answers = ExchangeAnswers.ofSkewedJoin(spark);
    assertThat(answers.thallus).isEqualTo(answers.spark).isNotEmpty();
    assertThat(answers.thallusPlan).contains("ThallusShuffleExchange");
  }

  @Test
  void mapOutputsStayInTheExecutorsEndpointsNotInSparksFiles() throws Exception {
    spark.conf().set("spark.sql.adaptive.enabled", "false");
    try {
      Dataset<Row> shuffled = spark.range(0, 50_000, 1, 3).toDF().repartition(5, org.apache.spark.sql.functions.col("id"));
      assertThat(shuffled.collectAsList()).hasSize(50_000);
      int shuffleId = ThallusExchangeTest.thallusShuffleId(shuffled.queryExecution().executedPlan());
      assertThat(shuffleId).isNotNegative();
      try (Stream<Path> files = Files.walk(cluster.localDirs)) {
        List<String> names = files.map(f -> f.getFileName().toString()).toList();
        assertThat(names).as("Spark's shuffle files of shuffle " + shuffleId)
            .noneMatch(name -> name.startsWith("shuffle_" + shuffleId + "_"));
        assertThat(names).as("the executors' endpoints' spill folders").anyMatch(name -> name.startsWith("exchange-"));
      }
    } finally {
      spark.conf().unset("spark.sql.adaptive.enabled");
    }
  }

  @Test
  void anUnknownStoreIsRefusedNamingTheKeyAndTheChoices() {
    assertThat(ShuffleStoreKind.of(new SparkConf())).isEqualTo(ShuffleStoreKind.SPARK);
    assertThat(ShuffleStoreKind.of(new SparkConf().set(ShuffleOptions.STORE, " Exchange ")))
        .isEqualTo(ShuffleStoreKind.EXCHANGE);
    assertThatThrownBy(() -> ShuffleStoreKind.of(new SparkConf().set(ShuffleOptions.STORE, "push")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("spark.thallus.shuffle.store must be one of spark, exchange, not 'push'");
    assertThatThrownBy(() -> new ExchangeStore(new SparkConf().set(ShuffleOptions.EXCHANGE_TRANSPORT, "rdma")))
        .hasMessageContaining(ShuffleOptions.EXCHANGE_TRANSPORT);
  }
}
