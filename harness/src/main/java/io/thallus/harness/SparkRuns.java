package io.thallus.harness;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;

/** What the Spark benchmarks share: their options, answers as comparable text, the median of timed runs. */
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

  /** {@code --name value} pairs as name to value (a name without a value is left out). */
  static Map<String, String> options(String[] args) {
    Map<String, String> options = new LinkedHashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      options.put(args[i].replaceFirst("^--", ""), args[i + 1]);
    }
    return options;
  }

  static double median(List<Double> values) {
    double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    int n = sorted.length;
    return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  }
}
