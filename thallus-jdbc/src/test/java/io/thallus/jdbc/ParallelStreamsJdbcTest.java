package io.thallus.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.Location;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
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
 * The {@code streams} property: a query's rows on several parallel streams read as one ResultSet, compared with
 * DuckDB's own driver over the same table; an ordered query keeps DuckDB's order.
 */
@Timeout(300)
class ParallelStreamsJdbcTest {
  private static final String TABLE = "CREATE TABLE big AS SELECT i AS id, i % 1000 AS k, i * 3 AS v "
      + "FROM range(600000) t(i)";
  private static BufferAllocator allocator;
  private static ThallusServer server;
  private static String url;
  private static Connection duckdb;

  @BeforeAll
  static void start() throws SQLException {
    allocator = new RootAllocator();
    server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create()).build().start();
    url = "jdbc:thallus://127.0.0.1:" + server.getLocation().port();
    try (Connection setup = DriverManager.getConnection(url); Statement statement = setup.createStatement()) {
      statement.execute(TABLE);
    }
    duckdb = DriverManager.getConnection("jdbc:duckdb:");
    try (Statement statement = duckdb.createStatement()) {
      statement.execute(TABLE);
    }
  }

  @AfterAll
  static void stop() throws SQLException {
    try {
      duckdb.close();
      server.close();
    } finally {
      allocator.close();
    }
  }

  /** Rows, and the sums of the two columns. */
  private static long[] totals(Connection connection, String sql) throws SQLException {
    long[] totals = new long[3];
    try (Statement statement = connection.createStatement(); ResultSet rows = statement.executeQuery(sql)) {
      while (rows.next()) {
        totals[0]++;
        totals[1] += rows.getLong(1);
        totals[2] += rows.getLong(2);
      }
    }
    return totals;
  }

  @Test
  void aResultSetOverFourStreamsHoldsEveryRowOnce() throws SQLException {
    String sql = "SELECT id, v FROM big WHERE k < 700";
    try (Connection connection = DriverManager.getConnection(url + "?streams=4&batchRows=4096")) {
      assertThat(totals(connection, sql)).containsExactly(totals(duckdb, sql));
    }
  }

  @Test
  void anOrderedQueryKeepsDuckDBsOrder() throws SQLException {
    String sql = "SELECT id, v FROM big WHERE k < 10 ORDER BY v DESC";
    try (Connection connection = DriverManager.getConnection(url + "?streams=4&batchRows=512")) {
      assertThat(ids(connection, sql)).containsExactlyElementsOf(ids(duckdb, sql));
    }
  }

  private static List<Long> ids(Connection connection, String sql) throws SQLException {
    List<Long> ids = new ArrayList<>();
    try (Statement statement = connection.createStatement(); ResultSet rows = statement.executeQuery(sql)) {
      while (rows.next()) {
        ids.add(rows.getLong(1));
      }
    }
    return ids;
  }

  @Test
  void moreStreamsThanTheLimitAreRefusedAtConnect() {
    assertThatThrownBy(() -> DriverManager.getConnection(url + "?streams=65")).isInstanceOf(SQLException.class)
        .hasMessageContaining("streams must be at most 64");
  }
}
