package io.thallus.testing;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/** A query's rows through any JDBC driver, as strings: for comparing two drivers' answers to the same SQL. */
public final class JdbcRows {
  private JdbcRows() {}

  /** Every row of {@code sql}'s result, each column by {@link ResultSet#getString}. */
  public static List<List<String>> of(Connection connection, String sql) throws SQLException {
    List<List<String>> rows = new ArrayList<>();
    try (Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery(sql)) {
      int columns = result.getMetaData().getColumnCount();
      while (result.next()) {
        List<String> row = new ArrayList<>();
        for (int i = 1; i <= columns; i++) {
          row.add(result.getString(i));
        }
        rows.add(row);
      }
    }
    return rows;
  }
}
