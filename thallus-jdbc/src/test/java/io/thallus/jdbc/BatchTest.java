package io.thallus.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.Location;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import io.thallus.testing.JdbcRows;
import java.math.BigDecimal;
import java.sql.BatchUpdateException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.UUID;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code executeBatch} of prepared statements: the rows go as Arrow batches of parameters, and what lands in the
 * table is compared with DuckDB's own driver running the same batch on a database of its own.
 */
@Timeout(300)
class BatchTest {
  private static BufferAllocator allocator;
  private static ThallusServer server;
  private static String url;

  private static final String TABLE = "CREATE TABLE typed (i INTEGER, b BIGINT, s SMALLINT, f DOUBLE, r REAL, "
      + "ok BOOLEAN, d DECIMAL(12, 3), name VARCHAR, day DATE, clock TIME, stamp TIMESTAMP, zoned TIMESTAMPTZ, "
      + "id UUID, raw BLOB)";

  @BeforeAll
  static void start() {
    allocator = new RootAllocator();
    // A small frame limit, so a batch of 12,000 rows takes several requests.
    server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create())
        .maxFrameBytes(512 * 1024).build().start();
    url = "jdbc:thallus://127.0.0.1:" + server.getLocation().port();
  }

  @AfterAll
  static void stop() {
    try {
      server.close();
    } finally {
      allocator.close();
    }
  }

  private static void insertTyped(Connection connection, int rows) throws SQLException {
    try (PreparedStatement insert = connection.prepareStatement(
        "INSERT INTO typed VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
      for (int i = 0; i < rows; i++) {
        insert.setInt(1, i);
        insert.setLong(2, (long) i * 1_000_000_007L);
        insert.setShort(3, (short) (i % 30000));
        insert.setDouble(4, i / 7.0);
        insert.setFloat(5, i / 3.0f);
        insert.setBoolean(6, i % 2 == 0);
        insert.setBigDecimal(7, BigDecimal.valueOf(i, 3));
        if (i % 10 == 3) {
          insert.setNull(8, java.sql.Types.VARCHAR);
        } else {
          insert.setString(8, "name " + i + " ünï");
        }
        insert.setObject(9, LocalDate.of(2024, 1, 1).plusDays(i % 400));
        insert.setObject(10, LocalTime.of(i % 24, i % 60, i % 60, (i % 1000) * 1000));
        insert.setTimestamp(11, Timestamp.valueOf(LocalDateTime.of(2023, 5, 6, 7, 8, 9).plusSeconds(i)));
        insert.setObject(12, OffsetDateTime.of(2022, 2, 3, 4, 5, 6, 0, ZoneOffset.ofHours(2)).plusMinutes(i));
        insert.setObject(13, new UUID(i, -i));
        insert.setBytes(14, new byte[] {(byte) i, 1, 2});
        insert.addBatch();
      }
      int[] counts = insert.executeBatch();
      assertThat(counts).hasSize(rows).containsOnly(1);
    }
  }

  @Test
  void everyTypeLandsAsDuckDBsOwnDriverPutsIt() throws Exception {
    // 12,000 rows of 14 columns: several requests (see the frame limit), so the batch's own transaction spans them.
    try (Connection thallus = DriverManager.getConnection(url);
         Connection duckdb = DriverManager.getConnection("jdbc:duckdb:")) {
      for (Connection connection : List.of(thallus, duckdb)) {
        try (Statement statement = connection.createStatement()) {
          statement.execute(TABLE);
        }
        insertTyped(connection, 12_000);
      }
      String sql = "SELECT i, b, s, f, r, ok, d, name, day, clock, stamp, epoch_us(zoned) AS zoned, id, raw FROM typed "
          + "ORDER BY i";
      assertThat(JdbcRows.of(thallus, sql)).hasSize(12_000).isEqualTo(JdbcRows.of(duckdb, sql));
      try (Statement statement = thallus.createStatement()) {
        statement.execute("DROP TABLE typed");
      }
    }
  }

  @Test
  void otherStatementsRunPerRowInOneRequestWithTheirOwnCounts() throws Exception {
    try (Connection thallus = DriverManager.getConnection(url);
         Connection duckdb = DriverManager.getConnection("jdbc:duckdb:")) {
      for (Connection connection : List.of(thallus, duckdb)) {
        try (Statement statement = connection.createStatement()) {
          statement.execute("CREATE TABLE stock (item INTEGER, qty INTEGER)");
          statement.execute("INSERT INTO stock SELECT i % 10, i FROM range(100) t(i)");
        }
        try (PreparedStatement update = connection.prepareStatement(
            "UPDATE stock SET qty = qty + ? WHERE item = ?")) {
          for (int item = 0; item < 12; item++) {
            update.setInt(1, item * 100);
            update.setInt(2, item);
            update.addBatch();
          }
          // Items 10 and 11 match no row: their counts are 0.
          assertThat(update.executeBatch()).containsExactly(10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 0, 0);
        }
      }
      String sql = "SELECT item, sum(qty) FROM stock GROUP BY item ORDER BY item";
      assertThat(JdbcRows.of(thallus, sql)).isEqualTo(JdbcRows.of(duckdb, sql));
      try (Statement statement = thallus.createStatement()) {
        statement.execute("DROP TABLE stock");
      }
    }
  }

  @Test
  void aFailingBatchAppliesNothingAndSaysWhy() throws Exception {
    try (Connection thallus = DriverManager.getConnection(url); Statement statement = thallus.createStatement()) {
      statement.execute("CREATE TABLE keyed (id INTEGER PRIMARY KEY, note VARCHAR)");
      statement.execute("INSERT INTO keyed VALUES (5, 'already there')");
      try (PreparedStatement insert = thallus.prepareStatement("INSERT INTO keyed VALUES (?, ?)")) {
        for (int i = 0; i < 50_000; i++) {
          insert.setInt(1, i);
          insert.setString(2, "row " + i);
          insert.addBatch();
        }
        assertThatThrownBy(insert::executeBatch).isInstanceOf(BatchUpdateException.class)
            .hasMessageContaining("none of its 50000 rows applied").hasMessageContaining("5")
            .satisfies(e -> assertThat(((BatchUpdateException) e).getLargeUpdateCounts()).isEmpty());
      }
      assertThat(JdbcRows.of(thallus, "SELECT count(*) FROM keyed")).containsExactly(List.of("1"));
      // In manual-commit mode the batch joins the transaction, and a rollback takes it back.
      thallus.setAutoCommit(false);
      try (PreparedStatement insert = thallus.prepareStatement("INSERT INTO keyed (id, note) VALUES (?, ?)")) {
        for (int i = 100; i < 110; i++) {
          insert.setInt(1, i);
          insert.setString(2, "in a transaction");
          insert.addBatch();
        }
        assertThat(insert.executeBatch()).hasSize(10);
      }
      assertThat(JdbcRows.of(thallus, "SELECT count(*) FROM keyed")).containsExactly(List.of("11"));
      thallus.rollback();
      thallus.setAutoCommit(true);
      assertThat(JdbcRows.of(thallus, "SELECT count(*) FROM keyed")).containsExactly(List.of("1"));
      statement.execute("DROP TABLE keyed");
    }
  }
}
