package io.thallus.spark;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

/**
 * Answers as text that Spark's rows and DuckDB's JDBC rows print alike, so a test compares the two lists: one row a
 * line of values joined by {@code |}; decimals without trailing zeros, doubles to 6 places, NULL as {@code NULL}.
 */
final class Answers {
  private Answers() {}

  /** Spark's rows of {@code df}, in the order it gives them. */
  static List<String> rows(Dataset<Row> df) {
    List<String> rows = new ArrayList<>();
    for (Row row : df.collectAsList()) {
      List<String> values = new ArrayList<>();
      for (int c = 0; c < row.length(); c++) {
        values.add(text(row.get(c)));
      }
      rows.add(String.join("|", values));
    }
    return rows;
  }

  /** DuckDB's rows of {@code sql} run on {@code statement}, in its order; none when it is not a query. */
  static List<String> duckdb(Statement statement, String sql) throws SQLException {
    List<String> rows = new ArrayList<>();
    if (!statement.execute(sql)) {
      return rows;
    }
    try (ResultSet rs = statement.getResultSet()) {
      int columns = rs.getMetaData().getColumnCount();
      while (rs.next()) {
        List<String> values = new ArrayList<>();
        for (int c = 1; c <= columns; c++) {
          // DuckDB's driver answers a DATE as java.sql.Date, whose text differs from Spark's LocalDate for old dates.
          Object value = rs.getMetaData().getColumnTypeName(c).equals("DATE")
              ? rs.getObject(c, LocalDate.class) : rs.getObject(c);
          values.add(text(rs.wasNull() ? null : value));
        }
        rows.add(String.join("|", values));
      }
    }
    return rows;
  }

  static String text(Object value) {
    return switch (value) {
      case null -> "NULL";
      case BigDecimal d -> d.signum() == 0 ? "0" : d.stripTrailingZeros().toPlainString();
      case BigInteger i -> i.toString();
      case Double d -> String.format(Locale.ROOT, "%.6f", d);
      default -> value.toString();
    };
  }
}
