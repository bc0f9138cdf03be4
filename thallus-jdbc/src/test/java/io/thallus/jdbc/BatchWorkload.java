package io.thallus.jdbc;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.Date;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Batched writes through plain JDBC, the same for any driver: run through jdbc:thallus in a JVM with no flags
 * ({@link FlaglessBatchMain}) and through DuckDB's own driver in process, the two must print the same lines (update
 * counts, then the tables' rows).
 */
final class BatchWorkload {
  /** Enough rows that a framework's batch (about 60 bytes a row) leaves its frame: over 32 KiB. */
  static final int ROWS = 2000;
  static final String COLUMNS = "id INTEGER, name VARCHAR, price DECIMAL(12,2), day DATE, stamp TIMESTAMP, flag BOOLEAN, "
      + "ratio DOUBLE";
  static final String INSERT = "INSERT INTO %s VALUES (?, ?, ?, ?, ?, ?, ?)";

  private BatchWorkload() {}

  /** Row {@code i}: every kind of value a batch carries, a NULL name on some rows. */
  static Object[] row(int i) {
    return new Object[] {i, i % 7 == 3 ? null : "name " + i + (i % 5 == 0 ? " ünï'q ✓" : ""),
        BigDecimal.valueOf(i * 1234L - 99_999L, 2), Date.valueOf(LocalDate.of(2024, 1, 1).plusDays(i - 300)),
        Timestamp.valueOf(LocalDateTime.of(2023, 12, 31, 23, 59, 59).plusSeconds(i * 3601L).plusNanos(i * 1000L)),
        i % 3 == 0, i / 3.0 - 7};
  }

  static List<Object[]> rows() {
    List<Object[]> rows = new ArrayList<>();
    for (int i = 0; i < ROWS; i++) {
      rows.add(row(i));
    }
    return rows;
  }

  static void create(Connection connection, String table) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      statement.execute("CREATE OR REPLACE TABLE " + table + " (" + COLUMNS + ")");
    }
  }

  /**
   * Every batch a plain JDBC program sends: a prepared INSERT (and in manual-commit mode, committed and rolled back),
   * a prepared UPDATE and DELETE, and a Statement's batch of SQL texts. Returns one line per batch: its counts.
   */
  static List<String> plainJdbc(Connection connection, String table) throws SQLException {
    List<String> counts = new ArrayList<>();
    create(connection, table);
    try (PreparedStatement insert = connection.prepareStatement(INSERT.formatted(table))) {
      for (int i = 0; i < ROWS / 2; i++) {
        bind(insert, row(i));
        insert.addBatch();
      }
      counts.add(counts("insert", insert.executeBatch()));
    }
    connection.setAutoCommit(false);
    try (PreparedStatement insert = connection.prepareStatement(INSERT.formatted(table))) {
      for (int i = ROWS / 2; i < ROWS; i++) {
        bind(insert, row(i));
        insert.addBatch();
      }
      counts.add(counts("insert in a transaction", insert.executeBatch()));
      connection.commit();
      for (int i = 0; i < 10; i++) {
        bind(insert, row(ROWS + i));
        insert.addBatch();
      }
      counts.add(counts("insert rolled back", insert.executeBatch()));
      connection.rollback();
    } finally {
      connection.setAutoCommit(true);
    }
    try (PreparedStatement update = connection.prepareStatement(
        "UPDATE " + table + " SET name = ?, ratio = ratio * ? WHERE id % 10 = ?")) {
      for (int i = 0; i < 10; i += 3) {
        update.setString(1, "updated " + i);
        update.setDouble(2, 1.5);
        update.setInt(3, i);
        update.addBatch();
      }
      counts.add("counts update " + Arrays.toString(update.executeBatch()));
    }
    try (PreparedStatement delete = connection.prepareStatement("DELETE FROM " + table + " WHERE id = ?")) {
      for (int id : new int[] {5, 6, 7, 9999}) {
        delete.setInt(1, id);
        delete.addBatch();
      }
      counts.add("counts delete " + Arrays.toString(delete.executeBatch()));
    }
    try (Statement statement = connection.createStatement()) {
      statement.addBatch("UPDATE " + table + " SET flag = NOT flag WHERE id < 20");
      statement.addBatch("INSERT INTO " + table + " (id, name) VALUES (100000, 'from a statement')");
      statement.addBatch("DELETE FROM " + table + " WHERE id BETWEEN 30 AND 39");
      counts.add("counts statement " + Arrays.toString(statement.executeBatch()));
    }
    return counts;
  }

  /** A table filled by one prepared INSERT batch of every row: what each framework's batch must leave too. */
  static String insertAll(Connection connection, String table) throws SQLException {
    create(connection, table);
    try (PreparedStatement insert = connection.prepareStatement(INSERT.formatted(table))) {
      for (Object[] row : rows()) {
        bind(insert, row);
        insert.addBatch();
      }
      return counts(table, insert.executeBatch());
    }
  }

  /** The line that reports a batch's update counts. */
  static String counts(String label, int[] counts) {
    return "counts " + label + " " + counts.length + " rows, " + sum(counts) + " updated";
  }

  private static long sum(int[] counts) {
    long sum = 0;
    for (int count : counts) {
      sum += count;
    }
    return sum;
  }

  private static void bind(PreparedStatement statement, Object[] row) throws SQLException {
    for (int i = 0; i < row.length; i++) {
      statement.setObject(i + 1, row[i]);
    }
  }

  /** The table's rows in id order, each as the driver's getString of every column. */
  static List<String> dump(Connection connection, String table) throws SQLException {
    List<String> lines = new ArrayList<>();
    try (Statement statement = connection.createStatement();
         ResultSet rows = statement.executeQuery("SELECT * FROM " + table + " ORDER BY id")) {
      int columns = rows.getMetaData().getColumnCount();
      while (rows.next()) {
        StringBuilder line = new StringBuilder("row ").append(table);
        for (int column = 1; column <= columns; column++) {
          line.append(" | ").append(rows.getString(column));
        }
        lines.add(line.toString());
      }
    }
    return lines;
  }
}
