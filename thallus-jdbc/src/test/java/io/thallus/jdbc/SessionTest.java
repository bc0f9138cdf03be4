package io.thallus.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.Location;
import io.thallus.server.ThallusServer;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.testing.ChildJvm;
import io.thallus.testing.JdbcRows;
import io.thallus.testing.ServeProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.SQLTransactionRollbackException;
import java.sql.Statement;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Sessions, transactions and a durable database through plain JDBC, as an application uses them: each JDBC
 * connection is one session on the server, and what a session sees is compared with DuckDB's own driver doing the
 * same on a database of its own.
 */
@Timeout(300)
class SessionTest {
  @TempDir
  static Path data;

  private static BufferAllocator allocator;
  private static DuckDBEngine engine;
  private static ThallusServer server;
  private static String url;

  @BeforeAll
  static void start() {
    allocator = new RootAllocator();
    engine = DuckDBEngine.builder().filesUnder(data).build();
    server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), engine).dataRoot(data).build()
        .start();
    url = "jdbc:thallus://127.0.0.1:" + server.getLocation().port();
  }

  @AfterAll
  static void stop() {
    try {
      server.close();
      engine.close();
    } finally {
      allocator.close();
    }
  }

  private static long count(Connection connection, String sql) throws SQLException {
    try (Statement statement = connection.createStatement(); ResultSet rows = statement.executeQuery(sql)) {
      assertThat(rows.next()).isTrue();
      return rows.getLong(1);
    }
  }

  @Test
  void tempTablesVariablesAndUseLastForTheSessionAndStayInIt() throws Exception {
    try (Connection thallus = DriverManager.getConnection(url);
         Connection other = DriverManager.getConnection(url);
         Connection duckdb = DriverManager.getConnection("jdbc:duckdb:")) {
      for (Connection connection : List.of(thallus, duckdb)) {
        try (Statement statement = connection.createStatement()) {
          statement.execute("CREATE TEMP TABLE scratch AS SELECT i, i * i AS square FROM range(10) t(i)");
          statement.execute("SET VARIABLE factor = 3");
          statement.execute("CREATE SCHEMA IF NOT EXISTS s19");
          statement.execute("USE s19");
          statement.execute("CREATE TABLE IF NOT EXISTS in_schema AS SELECT 1 AS one");
        }
      }
      String sql = "SELECT sum(square) * getvariable('factor') AS total, current_schema() AS schema, "
          + "(SELECT count(*) FROM in_schema) AS here FROM scratch";
      assertThat(JdbcRows.of(thallus, sql)).isEqualTo(JdbcRows.of(duckdb, sql)).isNotEmpty();
      assertThat(thallus.getSchema()).isEqualTo(duckdb.getSchema()).isEqualTo("s19");
      thallus.setSchema("main");
      duckdb.setSchema("main");
      assertThat(thallus.getSchema()).isEqualTo(duckdb.getSchema()).isEqualTo("main");
      assertThat(thallus.getCatalog()).isEqualTo("memory");
      assertThatThrownBy(() -> count(other, "SELECT count(*) FROM scratch"))
          .as("another session does not see the temp table").hasMessageContaining("scratch");
    }
  }

  @Test
  void anAttachBelongsToItsSessionAndEndsWithIt() throws Exception {
    Path file = data.resolve("mine.duckdb");
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:" + file);
         Statement statement = duckdb.createStatement()) {
      statement.execute("CREATE TABLE notes AS SELECT 'kept' AS note");
    }
    try (Connection attaching = DriverManager.getConnection(url); Statement statement = attaching.createStatement()) {
      statement.execute("ATTACH '" + file + "' AS mine");
      statement.executeUpdate("INSERT INTO mine.notes VALUES ('added')");
      assertThat(count(attaching, "SELECT count(*) FROM mine.notes")).isEqualTo(2);
    }
    // Detached with the session: the file is free again, here as a dataset of another connection. The server ends
    // the session after the client has closed, so the file is free once that has run: wait for it, with a deadline.
    io.thallus.testing.Eventually.await("the attached file detached with its session", java.time.Duration.ofSeconds(60),
        () -> {
          try (Connection probe = DriverManager.getConnection(url + "/mine.duckdb")) {
            JdbcRows.of(probe, "SELECT 1");
            return true;
          } catch (SQLException e) {
            if (String.valueOf(e.getMessage()).contains("already attached")) {
              return false;
            }
            throw new AssertionError("the dataset did not open for another reason", e);
          }
        });
    try (Connection reader = DriverManager.getConnection(url + "/mine.duckdb")) {
      assertThat(JdbcRows.of(reader, "SELECT note FROM notes ORDER BY note"))
          .containsExactly(List.of("added"), List.of("kept"));
    }
  }

  @Test
  void lockedSettingsAreRefusedByName() throws Exception {
    try (Connection thallus = DriverManager.getConnection(url); Statement statement = thallus.createStatement()) {
      assertThatThrownBy(() -> statement.execute("SET memory_limit = '100GB'"))
          .isInstanceOf(SQLException.class).hasMessageContaining("memory_limit").hasMessageContaining("locked")
          .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("42501"));
      assertThatThrownBy(() -> statement.execute("SET enable_external_access = true"))
          .hasMessageContaining("enable_external_access");
      statement.execute("SET search_path = 'main'");
    }
  }

  @Test
  void manualCommitRollsBackAndCommitsAsDuckDBsOwnDriverDoes() throws Exception {
    try (Connection thallus = DriverManager.getConnection(url);
         Connection duckdb = DriverManager.getConnection("jdbc:duckdb:")) {
      for (Connection connection : List.of(thallus, duckdb)) {
        try (Statement statement = connection.createStatement()) {
          statement.execute("CREATE TABLE ledger (id INTEGER, amount DECIMAL(10, 2))");
          statement.execute("INSERT INTO ledger VALUES (1, 10.00)");
        }
        connection.setAutoCommit(false);
        try (PreparedStatement insert = connection.prepareStatement("INSERT INTO ledger VALUES (?, ?)")) {
          insert.setInt(1, 2);
          insert.setBigDecimal(2, new java.math.BigDecimal("20.50"));
          assertThat(insert.executeUpdate()).isEqualTo(1);
          connection.rollback();
          insert.setInt(1, 3);
          insert.setBigDecimal(2, new java.math.BigDecimal("30.25"));
          insert.executeUpdate();
          connection.commit();
          insert.setInt(1, 4);
          insert.setBigDecimal(2, new java.math.BigDecimal("40.00"));
          insert.executeUpdate();
        }
        // Turning auto-commit back on commits the open transaction.
        connection.setAutoCommit(true);
      }
      String sql = "SELECT id, amount FROM ledger ORDER BY id";
      assertThat(JdbcRows.of(thallus, sql)).isEqualTo(JdbcRows.of(duckdb, sql))
          .containsExactly(List.of("1", "10.00"), List.of("3", "30.25"), List.of("4", "40.00"));
      assertThat(thallus.getTransactionIsolation()).isEqualTo(duckdb.getTransactionIsolation())
          .isEqualTo(Connection.TRANSACTION_REPEATABLE_READ);
      assertThatThrownBy(thallus::setSavepoint).isInstanceOf(SQLFeatureNotSupportedException.class)
          .hasMessageContaining("savepoints");
      try (Statement statement = thallus.createStatement()) {
        statement.execute("DROP TABLE ledger");
      }
    }
  }

  @Test
  void transactionStatementsWorkAndAnotherSessionSeesOnlyWhatIsCommitted() throws Exception {
    try (Connection writer = DriverManager.getConnection(url);
         Connection reader = DriverManager.getConnection(url);
         Statement write = writer.createStatement()) {
      write.execute("CREATE TABLE visible (i INTEGER)");
      write.execute("BEGIN TRANSACTION");
      write.execute("INSERT INTO visible SELECT * FROM range(5)");
      assertThat(count(writer, "SELECT count(*) FROM visible")).isEqualTo(5);
      assertThat(count(reader, "SELECT count(*) FROM visible")).as("uncommitted").isZero();
      write.execute("COMMIT");
      assertThat(count(reader, "SELECT count(*) FROM visible")).isEqualTo(5);
      write.execute("BEGIN");
      write.execute("DELETE FROM visible");
      write.execute("ROLLBACK");
      assertThat(count(reader, "SELECT count(*) FROM visible")).isEqualTo(5);
      write.execute("DROP TABLE visible");
    }
  }

  @Test
  void aWriteConflictIsSqlState40001AndTheLoserCanRetry() throws Exception {
    try (Connection first = DriverManager.getConnection(url);
         Connection second = DriverManager.getConnection(url)) {
      try (Statement statement = first.createStatement()) {
        statement.execute("CREATE TABLE account (id INTEGER PRIMARY KEY, balance INTEGER)");
        statement.execute("INSERT INTO account VALUES (1, 100)");
      }
      first.setAutoCommit(false);
      second.setAutoCommit(false);
      try (Statement a = first.createStatement(); Statement b = second.createStatement()) {
        a.executeUpdate("UPDATE account SET balance = balance - 10 WHERE id = 1");
        assertThatThrownBy(() -> b.executeUpdate("UPDATE account SET balance = balance + 10 WHERE id = 1"))
            .isInstanceOf(SQLTransactionRollbackException.class)
            .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("40001"))
            .hasMessageContaining("onflict");
        second.rollback();
        first.commit();
        b.executeUpdate("UPDATE account SET balance = balance + 10 WHERE id = 1");
        second.commit();
      }
      assertThat(count(first, "SELECT balance FROM account WHERE id = 1")).isEqualTo(100);
      first.setAutoCommit(true);
      try (Statement statement = first.createStatement()) {
        statement.execute("DROP TABLE account");
      }
    }
  }

  @Test
  void aSessionThatEndsMidTransactionRollsBack() throws Exception {
    try (Connection keeper = DriverManager.getConnection(url); Statement statement = keeper.createStatement()) {
      statement.execute("CREATE TABLE left_open (i INTEGER PRIMARY KEY)");
      Connection leaving = DriverManager.getConnection(url);
      leaving.setAutoCommit(false);
      try (Statement insert = leaving.createStatement()) {
        insert.executeUpdate("INSERT INTO left_open VALUES (1), (2)");
      }
      leaving.close();
      // The rolled-back rows neither show nor hold their keys: the same rows insert without a conflict.
      assertThat(count(keeper, "SELECT count(*) FROM left_open")).isZero();
      assertThat(statement.executeUpdate("INSERT INTO left_open VALUES (1), (2)")).isEqualTo(2);
      statement.execute("DROP TABLE left_open");
    }
  }

  @Test
  void resultSetsOpenAtOnceInOneSessionEachReadAllTheirRowsInOrder() throws Exception {
    try (Connection thallus = DriverManager.getConnection(url + "?batchRows=1000");
         Statement first = thallus.createStatement();
         Statement second = thallus.createStatement();
         Statement third = thallus.createStatement()) {
      third.execute("CREATE TEMP TABLE numbers AS SELECT i FROM range(50000) t(i)");
      ResultSet a = first.executeQuery("SELECT i FROM numbers ORDER BY i");
      ResultSet b = second.executeQuery("SELECT i * 2 FROM range(30000) t(i) ORDER BY i");
      long expectA = 0;
      long expectB = 0;
      // Interleaved: the first result was still streaming when the second statement ran.
      while (true) {
        boolean moreA = a.next();
        boolean moreB = b.next();
        if (!moreA && !moreB) {
          break;
        }
        if (moreA) {
          assertThat(a.getLong(1)).isEqualTo(expectA++);
        }
        if (moreB) {
          assertThat(b.getLong(1)).isEqualTo(2 * expectB++);
        }
        if (expectA == 10) {
          // A third statement in the middle, while both are open.
          assertThat(third.executeUpdate("INSERT INTO numbers VALUES (-1)")).isEqualTo(1);
        }
      }
      assertThat(expectA).isEqualTo(50000);
      assertThat(expectB).isEqualTo(30000);
      assertThat(count(thallus, "SELECT count(*) FROM numbers")).isEqualTo(50001);
    }
  }

  @Test
  void aDatabaseFileKeepsCommittedRowsAcrossARestartAndAKill(@TempDir Path work) throws Exception {
    Path root = Files.createDirectories(work.resolve("root"));
    Path database = work.resolve("durable.duckdb");
    try (ChildJvm serve = serve(root, database)) {
      try (Connection connection = DriverManager.getConnection(jdbcUrl(serve));
           Statement statement = connection.createStatement()) {
        statement.execute("CREATE TABLE kept (id INTEGER, note VARCHAR)");
        statement.executeUpdate("INSERT INTO kept VALUES (1, 'before restart')");
        connection.setAutoCommit(false);
        statement.executeUpdate("INSERT INTO kept VALUES (99, 'rolled back')");
        connection.rollback();
        connection.setAutoCommit(true);
      }
      ProcessHandle.of(serve.pid()).orElseThrow().destroy();
      serve.awaitExit(30);
    }
    try (ChildJvm serve = serve(root, database)) {
      try (Connection connection = DriverManager.getConnection(jdbcUrl(serve));
           Statement statement = connection.createStatement()) {
        assertThat(JdbcRows.of(connection, "SELECT id, note FROM kept ORDER BY id"))
            .containsExactly(List.of("1", "before restart"));
        statement.executeUpdate("INSERT INTO kept VALUES (2, 'before kill')");
        connection.setAutoCommit(false);
        statement.executeUpdate("INSERT INTO kept VALUES (3, 'committed before kill')");
        connection.commit();
        statement.executeUpdate("INSERT INTO kept VALUES (98, 'open at kill')");
        serve.kill();
      }
    }
    try (ChildJvm serve = serve(root, database)) {
      try (Connection connection = DriverManager.getConnection(jdbcUrl(serve))) {
        assertThat(JdbcRows.of(connection, "SELECT id, note FROM kept ORDER BY id")).containsExactly(
            List.of("1", "before restart"), List.of("2", "before kill"), List.of("3", "committed before kill"));
      }
      ProcessHandle.of(serve.pid()).orElseThrow().destroy();
      serve.awaitExit(30);
    }
    // What the server wrote is a DuckDB database: DuckDB's own driver reads the same rows.
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:" + database)) {
      assertThat(JdbcRows.of(duckdb, "SELECT id, note FROM kept ORDER BY id")).hasSize(3);
    }
    // thallus serve runs in its data root: relative paths in SQL mean files there.
    Files.writeString(root.resolve("relative.csv"), "id,note\n7,from a relative path\n");
    Files.writeString(work.resolve("outside.csv"), "id\n1\n");
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:" + root.resolve("side.duckdb"));
         Statement statement = duckdb.createStatement()) {
      statement.execute("CREATE TABLE side AS SELECT 42 AS answer");
    }
    try (ChildJvm serve = ServeProcess.start(root, work.resolve("other.duckdb"), 0, "--time-zone", "Asia/Kolkata")) {
      try (Connection connection = DriverManager.getConnection(jdbcUrl(serve));
           Statement statement = connection.createStatement();
           Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
           Statement direct = duckdb.createStatement()) {
        // The server's time zone, set by the operator, is every session's.
        direct.execute("SET TimeZone = 'Asia/Kolkata'");
        String shown = "SELECT current_setting('TimeZone'), TIMESTAMPTZ '2024-03-01 12:00:00+00'::VARCHAR";
        assertThat(JdbcRows.of(connection, shown)).isEqualTo(JdbcRows.of(duckdb, shown))
            .containsExactly(List.of("Asia/Kolkata", "2024-03-01 17:30:00+05:30"));
        assertThat(JdbcRows.of(connection, "SELECT id, note FROM read_csv('relative.csv')"))
            .containsExactly(List.of("7", "from a relative path"));
        statement.execute("ATTACH 'side.duckdb' AS side (READ_ONLY)");
        assertThat(count(connection, "SELECT answer FROM side.side")).isEqualTo(42);
        assertThatThrownBy(() -> statement.executeQuery("SELECT * FROM read_csv('../outside.csv')"))
            .isInstanceOf(SQLException.class).hasMessageContaining("Permission");
      }
    }
    try (ChildJvm serve = ServeProcess.start(root, database, 0, "--read-only")) {
      try (Connection connection = DriverManager.getConnection(jdbcUrl(serve));
           Statement statement = connection.createStatement()) {
        assertThat(count(connection, "SELECT count(*) FROM kept")).isEqualTo(3);
        assertThatThrownBy(() -> statement.executeUpdate("INSERT INTO kept VALUES (4, 'refused')"))
            .hasMessageContaining("read-only");
      }
    }
  }

  private static ChildJvm serve(Path root, Path database) throws Exception {
    return ServeProcess.start(root, database, 0);
  }

  private static String jdbcUrl(ChildJvm serve) throws InterruptedException {
    return ServeProcess.jdbcUrl(serve);
  }
}
