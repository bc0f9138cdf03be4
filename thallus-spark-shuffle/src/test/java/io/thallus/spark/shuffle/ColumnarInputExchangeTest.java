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
  /** Every claimed type, nulls in each. */
  private static final String TYPED = """
      SELECT id,
        IF(id % 11 = 0, NULL, id % 2 = 0) AS b,
        IF(id % 11 = 1, NULL, CAST(id % 100 AS TINYINT)) AS t,
        IF(id % 11 = 2, NULL, CAST(id % 30000 AS SMALLINT)) AS sm,
        IF(id % 11 = 3, NULL, CAST(id AS INT) * -3) AS i,
        IF(id % 11 = 4, NULL, id * 1000000007) AS l,
        IF(id % 11 = 5, NULL, id / 3.0D) AS d,
        IF(id % 11 = 6, NULL, CAST(id / 7.0 AS FLOAT)) AS f,
        IF(id % 11 = 7, NULL, CAST(id * 1.25 AS DECIMAL(12, 2))) AS dec,
        IF(id % 11 = 6, NULL, CAST(id % 99999 / -100.0 AS DECIMAL(7, 2))) AS small,
        IF(id % 11 = 8, NULL, CAST(id * 12345.678901 AS DECIMAL(38, 6))) AS wide,
        IF(id % 11 = 9, NULL, IF(id % 17 = 0, '', CONCAT('s-', id, REPEAT('é', CAST(id % 5 AS INT))))) AS s,
        IF(id % 11 = 10, NULL, DATE_ADD(DATE'1995-03-15', CAST(id % 4000 AS INT) - 2000)) AS dt,
        IF(id % 13 = 0, NULL, TIMESTAMP_MICROS(id * 3600000123)) AS ts,
        IF(id % 13 = 1, NULL, CAST(TIMESTAMP_MICROS(id * 1000003) AS TIMESTAMP_NTZ)) AS ntz,
        IF(id % 13 = 2, NULL, IF(id % 19 = 0, X'', CAST(CONCAT('b', id) AS BINARY))) AS bin
      FROM range(20000)
      """;

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
    spark.sql(TYPED).write().parquet(parquet);
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
    Dataset<Row> typed = spark.sql(TYPED);
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
