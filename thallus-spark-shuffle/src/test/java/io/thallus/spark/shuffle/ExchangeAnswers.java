package io.thallus.spark.shuffle;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * Runs one query on Spark's exchange and on the Thallus exchange, and gives both answers as text: sorted, or in the
 * order the query gave them ({@link #inOrder}).
 */
final class ExchangeAnswers {
  final List<String> spark;
  final List<String> thallus;
  final String thallusPlan;

  private ExchangeAnswers(List<String> spark, List<String> thallus, String thallusPlan) {
    this.spark = spark;
    this.thallus = thallus;
    this.thallusPlan = thallusPlan;
  }

  static ExchangeAnswers of(SparkSession session, Supplier<Dataset<Row>> query) {
    return of(session, query, ExchangeAnswers::rows);
  }

  /** Both answers in the order the query gives them, for a query whose order is part of its answer. */
  static ExchangeAnswers inOrder(SparkSession session, Supplier<Dataset<Row>> query) {
    return of(session, query, rows -> rows.collectAsList().stream().map(Row::toString).toList());
  }

  private static ExchangeAnswers of(SparkSession session, Supplier<Dataset<Row>> query,
      Function<Dataset<Row>, List<String>> answer) {
    session.conf().set(ShuffleOptions.ENABLED, "false");
    List<String> spark = answer.apply(query.get());
    session.conf().set(ShuffleOptions.ENABLED, "true");
    Dataset<Row> thallusQuery = query.get();
    List<String> thallus = answer.apply(thallusQuery);
    // After the action: with AQE on, the final plan (with its query stages) is known only then.
    String plan = thallusQuery.queryExecution().executedPlan().toString();
    return new ExchangeAnswers(spark, thallus, plan);
  }

  /**
   * A join whose key 0 holds most rows, under AQE with thresholds small enough that its skew join splits that
   * partition (partial reducer specs: parts of a partition's map outputs; the other side's partition read once per
   * part) and coalesces the small ones; AQE's settings are put back afterwards.
   */
  static ExchangeAnswers ofSkewedJoin(SparkSession session) {
    Map<String, String> adaptive = Map.of(
        "spark.sql.adaptive.enabled", "true",
        "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes", "1k",
        "spark.sql.adaptive.skewJoin.skewedPartitionFactor", "1",
        "spark.sql.adaptive.advisoryPartitionSizeInBytes", "4k");
    adaptive.forEach(session.conf()::set);
    try {
      return of(session, () -> {
        Dataset<Row> skewed = session.sql("SELECT IF(id % 10 < 8, 0, id % 500) AS k, id FROM range(40000)")
            .repartition(4);
        Dataset<Row> small = session.sql("SELECT id AS k, id * 2 AS w FROM range(500)");
        return skewed.join(small, "k").groupBy("k").count();
      });
    } finally {
      adaptive.keySet().forEach(session.conf()::unset);
    }
  }

  /**
   * Each SQL query gives Spark's answer (not empty) through the Thallus exchange, whose plan has a Thallus exchange;
   * {@code setting} names the session's state in a failure.
   */
  static void assertSparksAnswers(SparkSession session, String setting, String... queries) {
    for (String query : queries) {
      ExchangeAnswers answers = of(session, () -> session.sql(query));
      assertThat(answers.thallus).as(query + ", " + setting).isNotEmpty().isEqualTo(answers.spark);
      assertThat(answers.thallusPlan).as(query + ", " + setting).contains("ThallusShuffleExchange");
    }
  }

  static List<String> rows(Dataset<Row> rows) {
    return rows.collectAsList().stream().map(Row::toString).sorted().toList();
  }
}
