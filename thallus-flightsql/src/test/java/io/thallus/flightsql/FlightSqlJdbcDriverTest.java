package io.thallus.flightsql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.conformance.TypeTable;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The Arrow Flight SQL JDBC driver (the jar DBeaver and other tools load) against the front door. */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class FlightSqlJdbcDriverTest {
  private static FlightSqlFixture fixture;
  private static String url;

  @BeforeAll
  static void start() throws Exception {
    fixture = new FlightSqlFixture();
    url = "jdbc:arrow-flight-sql://127.0.0.1:" + fixture.flightSql.port() + "/?useEncryption=false&user="
        + FlightSqlFixture.USER + "&password=" + FlightSqlFixture.PASSWORD;
  }

  @AfterAll
  static void stop() throws Exception {
    fixture.close();
  }

  /** A cell as the getter a tool uses for the column's JDBC type would read it, as comparable text. */
  private static String cell(ResultSet rows, int column, int type) {
    try {
      return read(rows, column, type);
    } catch (SQLException | RuntimeException e) {
      return "failed: " + e;
    }
  }

  private static String read(ResultSet rows, int column, int type) throws SQLException {
    if (type == Types.TIMESTAMP_WITH_TIMEZONE) {
      java.sql.Timestamp instant = rows.getTimestamp(column);
      return instant == null ? "NULL" : instant.toInstant().toString();
    }
    Object any = rows.getObject(column);
    if (any == null) {
      return "NULL";
    }
    return switch (type) {
      case Types.BOOLEAN, Types.BIT -> Boolean.toString(rows.getBoolean(column));
      case Types.TINYINT, Types.SMALLINT, Types.INTEGER, Types.BIGINT -> Long.toString(rows.getLong(column));
      case Types.DECIMAL, Types.NUMERIC -> rows.getBigDecimal(column).stripTrailingZeros().toPlainString();
      case Types.REAL, Types.FLOAT -> Float.toString(rows.getFloat(column));
      case Types.DOUBLE -> Double.toString(rows.getDouble(column));
      case Types.BINARY, Types.VARBINARY, Types.LONGVARBINARY, Types.BLOB -> java.util.HexFormat.of().formatHex(
          rows.getBytes(column));
      case Types.DATE -> rows.getDate(column).toLocalDate().toString();
      case Types.TIME -> rows.getTime(column).toLocalTime().toString();
      case Types.TIMESTAMP -> rows.getTimestamp(column).toLocalDateTime().toString();
      // Nested values: the drivers print them differently (JSON against DuckDB's own syntax); the values agree.
      case Types.ARRAY, Types.STRUCT, Types.OTHER, Types.JAVA_OBJECT -> rows.getString(column)
          .replaceAll("[\\s\"']", "").replace("=", ":").toLowerCase(java.util.Locale.ROOT);
      default -> rows.getString(column);
    };
  }

  @Test
  void theTypeTableReadsAsDuckDBsOwnDriverReadsIt() throws Exception {
    String sql = TypeTable.sql(500);
    Map<String, List<String>> mismatches = new LinkedHashMap<>();
    try (Connection flight = DriverManager.getConnection(url);
         Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
         Statement ours = flight.createStatement();
         Statement theirs = duckdb.createStatement();
         ResultSet actual = ours.executeQuery(sql);
         ResultSet expected = theirs.executeQuery(sql)) {
      ResultSetMetaData meta = actual.getMetaData();
      ResultSetMetaData expectedMeta = expected.getMetaData();
      assertThat(meta.getColumnCount()).isEqualTo(expectedMeta.getColumnCount());
      int rows = 0;
      while (expected.next()) {
        assertThat(actual.next()).as("row %d", rows).isTrue();
        for (int column = 1; column <= meta.getColumnCount(); column++) {
          String name = meta.getColumnName(column);
          assertThat(name).isEqualTo(expectedMeta.getColumnName(column));
          String ourCell = cell(actual, column, expectedMeta.getColumnType(column));
          String theirCell = cell(expected, column, expectedMeta.getColumnType(column));
          if (!ourCell.equals(theirCell)) {
            mismatches.computeIfAbsent(name, k -> new ArrayList<>()).add(ourCell + " <> " + theirCell);
          }
        }
        rows++;
      }
      assertThat(actual.next()).isFalse();
      assertThat(rows).isEqualTo(500);
    }
    Map<String, String> first = new LinkedHashMap<>();
    mismatches.forEach((column, cells) -> first.put(column, cells.size() + " cells, e.g. " + cells.getFirst()));
    // What the Flight SQL JDBC driver (18.3) does with these columns, whatever the server: it reads unsigned
    // integers as signed ones of the same width, prints intervals as ISO-8601 periods and a map inside a struct
    // as a list of entries. The Arrow values themselves equal DuckDB's (FlightSqlClientTest).
    assertThat(first).as("columns read differently").containsOnlyKeys("c_utinyint", "c_uinteger", "c_interval",
        "c_struct_of_list");
  }

  @Test
  void metadataPreparedStatementsAndUpdates() throws Exception {
    try (Connection connection = DriverManager.getConnection(url); Statement statement = connection.createStatement()) {
      statement.executeUpdate("CREATE TABLE IF NOT EXISTS animals (id INTEGER PRIMARY KEY, name VARCHAR NOT NULL,"
          + " weight DECIMAL(9,2))");
      assertThat(statement.executeUpdate("INSERT INTO animals VALUES (1, 'duck', 1.25), (2, 'owl', 0.80)"))
          .isEqualTo(2);
      try (PreparedStatement insert = connection.prepareStatement("INSERT INTO animals VALUES (?, ?, ?)")) {
        insert.setInt(1, 3);
        insert.setString(2, "heron");
        insert.setBigDecimal(3, new BigDecimal("2.10"));
        assertThat(insert.executeUpdate()).isEqualTo(1);
      }
      try (PreparedStatement query = connection.prepareStatement(
          "SELECT name, weight FROM animals WHERE id >= ? AND name <> ? ORDER BY id")) {
        query.setInt(1, 2);
        query.setString(2, "nobody");
        List<String> rows = new ArrayList<>();
        try (ResultSet result = query.executeQuery()) {
          while (result.next()) {
            rows.add(result.getString(1) + " " + result.getBigDecimal(2));
          }
        }
        assertThat(rows).containsExactly("owl 0.80", "heron 2.10");
      }
      DatabaseMetaData meta = connection.getMetaData();
      List<String> tables = new ArrayList<>();
      try (ResultSet result = meta.getTables(null, "main", "anim%", null)) {
        while (result.next()) {
          tables.add(result.getString("TABLE_CAT") + "." + result.getString("TABLE_SCHEM") + "."
              + result.getString("TABLE_NAME") + " " + result.getString("TABLE_TYPE"));
        }
      }
      assertThat(tables).containsExactly("memory.main.animals TABLE");
      List<String> columns = new ArrayList<>();
      try (ResultSet result = meta.getColumns(null, "main", "animals", null)) {
        while (result.next()) {
          columns.add(result.getString("COLUMN_NAME") + ":" + result.getInt("DATA_TYPE"));
        }
      }
      assertThat(columns).containsExactly("id:" + Types.INTEGER, "name:" + Types.VARCHAR,
          "weight:" + Types.DECIMAL);
      List<String> keys = new ArrayList<>();
      try (ResultSet result = meta.getPrimaryKeys(null, "main", "animals")) {
        while (result.next()) {
          keys.add(result.getString("COLUMN_NAME") + "@" + result.getInt("KEY_SEQ"));
        }
      }
      assertThat(keys).containsExactly("id@1");
      assertThat(meta.getDatabaseProductName()).isEqualTo("Thallus");
    }
  }

  @Test
  void wrongCredentialsAndUnknownTablesAreSqlErrors() throws Exception {
    String wrong = url.replace("password=" + FlightSqlFixture.PASSWORD, "password=nope");
    assertThatThrownBy(() -> DriverManager.getConnection(wrong).close()).isInstanceOf(SQLException.class)
        .hasMessageContaining("UNAUTHENTICATED");
    String token = "jdbc:arrow-flight-sql://127.0.0.1:" + fixture.flightSql.port() + "/?useEncryption=false&token="
        + FlightSqlFixture.TOKEN;
    try (Connection connection = DriverManager.getConnection(token); Statement statement = connection.createStatement();
         ResultSet result = statement.executeQuery("SELECT 40 + 2")) {
      assertThat(result.next()).isTrue();
      assertThat(result.getInt(1)).isEqualTo(42);
    }
    try (Connection connection = DriverManager.getConnection(url); Statement statement = connection.createStatement()) {
      assertThatThrownBy(() -> statement.executeQuery("SELECT * FROM no_such_table"))
          .isInstanceOf(SQLException.class).hasMessageContaining("no_such_table");
    }
  }
}
