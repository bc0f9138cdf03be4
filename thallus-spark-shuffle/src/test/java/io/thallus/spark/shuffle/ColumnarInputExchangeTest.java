package io.thallus.spark.shuffle;

import static org.apache.spark.sql.functions.col;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.execution.FileSourceScanExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The Thallus exchange over columnar input on two executor JVMs, each answer equal to Spark's own exchange's: batches
 * of Spark's vectorized Parquet reader (on-heap vectors, scattered through their getters), and the Arrow batches of
 * other Thallus exchanges (scattered from their buffers). The plans are checked to hold such an exchange.
 */
class ColumnarInputExchangeTest extends ClusterTest {

  ColumnarInputExchangeTest() {
    super(TestCluster.builder());
  }

  @BeforeEach
  void withoutAqe() {
    // The plan checked is the one that runs: without AQE's stages, each exchange's child is in the executed plan.
    spark.conf().set("spark.sql.adaptive.enabled", "false");
  }

  @AfterEach
  void aqeBack() {
    spark.conf().unset("spark.sql.adaptive.enabled");
  }

  @Test
  void parquetScanBatchesCrossAsSparksExchangeMovesTheirRows() {
    String parquet = work.resolve("typed.parquet").toString();
    spark.sql(TypedRows.EVERY_CLAIMED_TYPE).write().parquet(parquet);
    ExchangeAnswers answers = ExchangeAnswers.of(spark, () -> readable(
        spark.read().parquet(parquet).repartition(7, col("i"), col("s"))));
    assertThat(answers.thallus).hasSize(20_000).isEqualTo(answers.spark);
    assertThat(columnarInputs(spark.read().parquet(parquet).repartition(7, col("i"), col("s"))))
        .as("the exchange reads the scan's batches").containsExactly(FileSourceScanExec.class.getSimpleName());
  }

  @Test
  void aThallusExchangesBatchesCrossASecondOne() {
    // Spark collapses a repartition of a repartition; over a union of two, both exchanges stay, and a union of
    // columnar children gives their batches.
    ExchangeAnswers answers = ExchangeAnswers.of(spark, () -> readable(overExchanges()));
    assertThat(answers.thallus).hasSize(20_000).isEqualTo(answers.spark);
    assertThat(columnarInputs(overExchanges())).as("the outer exchange reads the inner ones' batches")
        .containsExactly("UnionExec");
  }

  private Dataset<Row> overExchanges() {
    Dataset<Row> typed = spark.sql(TypedRows.EVERY_CLAIMED_TYPE);
    return typed.where("id % 2 = 0").repartition(5, col("l")).union(typed.where("id % 2 = 1").repartition(5, col("l")))
        .repartition(7, col("dec"), col("dt"), col("s"));
  }

  /** Binary columns as hex (a Row prints a byte array by its identity). */
  private static Dataset<Row> readable(Dataset<Row> rows) {
    return rows.selectExpr("*", "HEX(bin) AS hex").drop("bin");
  }

  /** The children of the query's Thallus exchanges that hand them batches, by their class's simple name. */
  private List<String> columnarInputs(Dataset<Row> query) {
    spark.conf().set(ShuffleOptions.ENABLED, "true");
    try {
      List<String> inputs = new ArrayList<>();
      collect(query.queryExecution().executedPlan(), inputs);
      return inputs;
    } finally {
      spark.conf().unset(ShuffleOptions.ENABLED);
    }
  }

  private static void collect(SparkPlan plan, List<String> inputs) {
    if (plan instanceof ThallusShuffleExchangeExec exchange && exchange.child().supportsColumnar()) {
      inputs.add(exchange.child().getClass().getSimpleName());
    }
    CollectionConverters.asJava(plan.children()).forEach(child -> collect(child, inputs));
  }
}
