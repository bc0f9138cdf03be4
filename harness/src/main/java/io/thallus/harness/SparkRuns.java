package io.thallus.harness;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Row;

/** What the Spark benchmarks share: answers as comparable text, and the median of a query's timed runs. */
final class SparkRuns {
  private SparkRuns() {}

  /** One line per row, values joined by {@code |}; decimals without trailing zeros, so 1.50 equals 1.5. */
  static List<String> text(List<Row> rows) {
    List<String> text = new ArrayList<>();
    for (Row row : rows) {
      List<String> values = new ArrayList<>();
      for (int c = 0; c < row.length(); c++) {
        Object value = row.get(c);
        values.add(value instanceof BigDecimal d ? d.stripTrailingZeros().toPlainString() : String.valueOf(value));
      }
      text.add(String.join("|", values));
    }
    return text;
  }

  static double median(List<Double> values) {
    double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    int n = sorted.length;
    return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  }
}
