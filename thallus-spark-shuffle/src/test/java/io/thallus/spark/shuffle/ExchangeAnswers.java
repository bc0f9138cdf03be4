package io.thallus.spark.shuffle;

import java.util.List;
import java.util.function.Supplier;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/** Runs one query on Spark's exchange and on the Thallus exchange, and gives both answers as sorted text. */
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
    session.conf().set(ShuffleOptions.ENABLED, "false");
    List<String> spark = rows(query.get());
    session.conf().set(ShuffleOptions.ENABLED, "true");
    Dataset<Row> thallusQuery = query.get();
    List<String> thallus = rows(thallusQuery);
    // After the action: with AQE on, the final plan (with its query stages) is known only then.
    String plan = thallusQuery.queryExecution().executedPlan().toString();
    return new ExchangeAnswers(spark, thallus, plan);
  }

  static List<String> rows(Dataset<Row> rows) {
    return rows.collectAsList().stream().map(Row::toString).sorted().toList();
  }
}
