package io.thallus.spark.shuffle;

import static org.apache.spark.sql.functions.col;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.function.Supplier;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Range partitioning ({@code ORDER BY}, {@code repartitionByRange}) through the Thallus exchange on two executor
 * JVMs: given the same bounds, every row must land in the partition Spark's exchange puts it in, and ordered
 * answers must come back in Spark's order, not only with Spark's rows.
 */
class RangePartitioningTest extends ClusterTest {
  private static final String SAMPLE_SIZE = "spark.sql.execution.rangeExchange.sampleSizePerPartition";

  RangePartitioningTest() {
    super(TestCluster.builder());
  }

  /** Rows of several types, with nulls and repeated keys, in three input partitions. */
  private Dataset<Row> rows() {
    return spark.sql("""
        SELECT id,
          IF(id % 17 = 0, NULL, id % 500) AS k,
          IF(id % 13 = 0, NULL, CONCAT('s-', id % 733)) AS s,
          IF(id % 11 = 0, NULL, CAST(id % 1000 / 7.0 AS DECIMAL(12, 3))) AS d,
          DATE_ADD(DATE'1995-03-15', CAST(id % 400 AS INT) - 200) AS dt,
          id / 3.0D AS x
        FROM range(0, 60000, 1, 3)""");
  }

  /**
   * Spark seeds its sample of the keys with the sampled RDD's id, so two runs of one query (Spark's own included)
   * may draw different bounds. Given the same bounds, the ids must be the same: with a sample as large as the input
   * every key is in it and the bounds no longer depend on the seed.
   */
  @Test
  void givenTheSameBoundsEveryRowLandsInSparksPartition() {
    spark.conf().set("spark.sql.adaptive.enabled", "false");
    spark.conf().set(SAMPLE_SIZE, "100000");
    try {
      Supplier<Dataset<Row>> partitioned = () -> rows()
          .repartitionByRange(7, col("k").desc_nulls_first(), col("s").asc_nulls_last(), col("d"))
          .selectExpr("id", "SPARK_PARTITION_ID() AS p");
      ExchangeAnswers answers = ExchangeAnswers.of(spark, partitioned);
      assertThat(answers.thallus).hasSize(60_000).isEqualTo(answers.spark);
      assertThat(answers.thallusPlan).contains("ThallusShuffleExchange rangepartitioning");
      assertThat(answers.thallus.stream().map(row -> row.substring(row.lastIndexOf(',') + 1)).distinct().count())
          .as("partitions that got rows").isGreaterThan(1);
    } finally {
      spark.conf().unset("spark.sql.adaptive.enabled");
      spark.conf().unset(SAMPLE_SIZE);
    }
  }

  @ParameterizedTest(name = "AQE {0}")
  @ValueSource(booleans = {false, true})
  void orderByGivesSparksRowsInSparksOrder(boolean adaptive) throws Exception {
    spark.conf().set("spark.sql.adaptive.enabled", String.valueOf(adaptive));
    try {
      assertSparksOrder("ORDER BY of several types",
          () -> rows().orderBy(col("dt").desc(), col("s").asc_nulls_first(), col("d").desc_nulls_last(), col("id")));
      TpchShapes.create(spark, work.resolve("tpch" + adaptive), 20_000);
      assertSparksOrder("TPC-H Q9", () -> spark.sql(TpchShapes.Q9));
    } finally {
      spark.conf().unset("spark.sql.adaptive.enabled");
    }
  }

  private void assertSparksOrder(String name, Supplier<Dataset<Row>> query) {
    ExchangeAnswers answers = ExchangeAnswers.inOrder(spark, query);
    assertThat(answers.thallus).as(name).isNotEmpty().isEqualTo(answers.spark);
    assertThat(answers.thallusPlan).as(name).contains("ThallusShuffleExchange rangepartitioning");
  }
}
