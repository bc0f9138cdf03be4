package io.thallus.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.Location;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ParameterMetaData;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code getParameterMetaData} tells the types the server's engine inferred for the placeholders, as DuckDB's own
 * driver tells them for the same statement on a database of its own.
 */
@Timeout(120)
class ParameterMetaDataTest {
  private static final String TABLE = "CREATE TABLE p (i INTEGER, b BIGINT, v VARCHAR, d DECIMAL(12, 3), "
      + "day DATE, ts TIMESTAMP, ok BOOLEAN, x DOUBLE, small DECIMAL(4, 1))";

  private static BufferAllocator allocator;
  private static ThallusServer server;
  private static String url;

  @BeforeAll
  static void start() {
    allocator = new RootAllocator();
    server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create()).build().start();
    url = "jdbc:thallus://127.0.0.1:" + server.getLocation().port() + "?transport=tcp";
  }

  @AfterAll
  static void stop() {
    try {
      server.close();
    } finally {
      allocator.close();
    }
  }

  @Test
  void typesAreDuckDBsOwnDriversForTheSameStatement() throws SQLException {
    String sql = "SELECT * FROM p WHERE i = ? AND b = ? AND v = ? AND d = ? AND day = ? AND ts = ? AND ok = ? "
        + "AND x = ? AND small = ? -- and '?' here is no parameter";
    try (Connection thallus = DriverManager.getConnection(url);
         Connection duckdb = DriverManager.getConnection("jdbc:duckdb:")) {
      for (Connection connection : List.of(thallus, duckdb)) {
        try (Statement statement = connection.createStatement()) {
          statement.execute(TABLE);
        }
      }
      try (PreparedStatement ours = thallus.prepareStatement(sql);
           PreparedStatement theirs = duckdb.prepareStatement(sql)) {
        ParameterMetaData expected = theirs.getParameterMetaData();
        ParameterMetaData actual = ours.getParameterMetaData();
        assertThat(actual.getParameterCount()).isEqualTo(expected.getParameterCount()).isEqualTo(9);
        assertThat(describe(actual)).isEqualTo(describe(expected));
        assertThat(actual.getParameterTypeName(4)).isEqualTo("DECIMAL(12,3)");
        assertThat(actual.getParameterType(1)).isEqualTo(java.sql.Types.INTEGER);
        assertThatThrownBy(() -> actual.getParameterType(10)).isInstanceOf(SQLException.class);
      }
    }
  }

  @Test
  void theCountComesFromTheServerAndAMissingValueIsNamed() throws SQLException {
    try (Connection connection = DriverManager.getConnection(url);
         PreparedStatement statement = connection.prepareStatement(
             "SELECT ?::INTEGER + 1 AS next, '?' AS text, $$ ? $$ AS dollars /* ? */")) {
      assertThat(statement.getParameterMetaData().getParameterCount()).isEqualTo(1);
      statement.setInt(1, 41);
      try (var result = statement.executeQuery()) {
        assertThat(result.next()).isTrue();
        assertThat(result.getInt("next")).isEqualTo(42);
        assertThat(result.getString("text")).isEqualTo("?");
      }
      assertThatThrownBy(() -> statement.setInt(2, 1)).isInstanceOf(SQLException.class)
          .hasMessageContaining("outside 1..1");
    }
    try (Connection connection = DriverManager.getConnection(url);
         PreparedStatement statement = connection.prepareStatement("SELECT ? AS a, ? AS b")) {
      statement.setInt(1, 1);
      assertThatThrownBy(statement::executeQuery).isInstanceOf(SQLException.class)
          .hasMessageContaining("parameter 2 of 2 is not set");
    }
  }

  private static List<String> describe(ParameterMetaData meta) throws SQLException {
    List<String> parameters = new ArrayList<>();
    for (int i = 1; i <= meta.getParameterCount(); i++) {
      parameters.add(i + ": " + meta.getParameterType(i) + " " + meta.getParameterTypeName(i) + " ("
          + meta.getPrecision(i) + "," + meta.getScale(i) + ") nullable " + meta.isNullable(i) + " mode "
          + meta.getParameterMode(i));
    }
    return parameters;
  }
}
