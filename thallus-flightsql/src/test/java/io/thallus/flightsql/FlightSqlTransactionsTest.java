package io.thallus.flightsql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.CallOption;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Transactions through Arrow Java's Flight SQL client, each outcome set beside DuckDB's own through its JDBC driver:
 * prepared statements kept across the ends of transactions, and a write conflict that a client can tell from bad SQL.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class FlightSqlTransactionsTest {
  private static FlightSqlFixture fixture;
  private static BufferAllocator clientMemory;

  @BeforeAll
  static void start() throws Exception {
    fixture = new FlightSqlFixture();
    clientMemory = new RootAllocator();
  }

  @AfterAll
  static void stop() throws Exception {
    clientMemory.close();
    fixture.close();
  }

  /** A Flight SQL client on a connection of its own, so a session of its own, logged in as alice. */
  private static final class Client implements AutoCloseable {
    final FlightClient flight = FlightClient.builder(clientMemory,
        Location.forGrpcInsecure("127.0.0.1", fixture.flightSql.port())).build();
    final FlightSqlClient sql = new FlightSqlClient(flight);
    final CallOption auth = flight.authenticateBasicToken(FlightSqlFixture.USER, FlightSqlFixture.PASSWORD)
        .orElseThrow();

    List<List<Object>> read(FlightInfo info) throws Exception {
      List<List<Object>> rows = new ArrayList<>();
      for (FlightEndpoint endpoint : info.getEndpoints()) {
        try (FlightStream stream = sql.getStream(endpoint.getTicket(), auth)) {
          while (stream.next()) {
            io.thallus.conformance.Values.appendRows(stream.getRoot(), stream.getDictionaryProvider(), rows);
          }
        }
      }
      return rows;
    }

    /** Binds one INTEGER parameter row to {@code statement} (which then owns it). */
    void bind(FlightSqlClient.PreparedStatement statement, int value) {
      VectorSchemaRoot row = VectorSchemaRoot.create(statement.getParameterSchema(), clientMemory);
      ((IntVector) row.getVector(0)).setSafe(0, value);
      row.setRowCount(1);
      statement.setParameters(row);
    }

    @Override
    public void close() throws Exception {
      sql.close();
    }
  }

  /** One step of the transaction script: bind x, run, then commit (true) or roll back (false). */
  private record Step(int x, boolean commit) {}

  private static final List<Step> SCRIPT = List.of(new Step(1, true), new Step(2, true), new Step(100, false),
      new Step(3, true), new Step(200, false), new Step(4, true));
  private static final String INSERT = "INSERT INTO kept VALUES (?)";
  private static final String COUNT = "SELECT count(*), sum(x)::BIGINT FROM kept WHERE x >= ?";

  /** What DuckDB itself keeps of the script: one JDBC prepared statement, autocommit off, run and ended per step. */
  private static List<List<Object>> duckdbAnswer() throws Exception {
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:")) {
      try (Statement statement = duckdb.createStatement()) {
        statement.execute("CREATE TABLE kept (x INTEGER)");
      }
      duckdb.setAutoCommit(false);
      List<List<Object>> answers = new ArrayList<>();
      try (PreparedStatement insert = duckdb.prepareStatement(INSERT);
           PreparedStatement count = duckdb.prepareStatement(COUNT)) {
        for (Step step : SCRIPT) {
          insert.setInt(1, step.x());
          insert.executeUpdate();
          count.setInt(1, 2);
          try (ResultSet rows = count.executeQuery()) {
            rows.next();
            answers.add(List.of(rows.getLong(1), rows.getObject(2) == null ? "NULL" : rows.getLong(2)));
          }
          if (step.commit()) {
            duckdb.commit();
          } else {
            duckdb.rollback();
          }
        }
        try (Statement statement = duckdb.createStatement();
             ResultSet rows = statement.executeQuery("SELECT x FROM kept ORDER BY x")) {
          List<Object> kept = new ArrayList<>();
          while (rows.next()) {
            kept.add(rows.getInt(1));
          }
          answers.add(kept);
        }
      }
      return answers;
    }
  }

  @Test
  void aPreparedStatementOutlivesTheTransactionItRanInAsInDuckDB() throws Exception {
    List<List<Object>> answers = new ArrayList<>();
    try (Client client = new Client()) {
      client.sql.executeUpdate("CREATE TABLE kept (x INTEGER)", client.auth);
      FlightSqlClient.Transaction transaction = client.sql.beginTransaction(client.auth);
      // Both prepared in the first transaction, as ADBC's DBAPI prepares with autocommit off, and then kept.
      FlightSqlClient.PreparedStatement insert = client.sql.prepare(INSERT, transaction, client.auth);
      FlightSqlClient.PreparedStatement count = client.sql.prepare(COUNT, transaction, client.auth);
      try {
        for (Step step : SCRIPT) {
          client.bind(insert, step.x());
          assertThat(insert.executeUpdate(client.auth)).as("insert %d", step.x()).isEqualTo(1);
          client.bind(count, 2);
          List<Object> row = client.read(count.execute(client.auth)).getFirst();
          answers.add(List.of(row.get(0), row.get(1) == null ? "NULL" : ((Number) row.get(1)).longValue()));
          if (step.commit()) {
            client.sql.commit(transaction, client.auth);
          } else {
            client.sql.rollback(transaction, client.auth);
          }
          transaction = client.sql.beginTransaction(client.auth);
        }
        client.sql.commit(transaction, client.auth);
      } finally {
        insert.close(client.auth);
        count.close(client.auth);
      }
      List<Object> kept = new ArrayList<>();
      for (List<Object> row : client.read(client.sql.execute("SELECT x FROM kept ORDER BY x", client.auth))) {
        kept.add(row.getFirst());
      }
      answers.add(kept);
      client.sql.executeUpdate("DROP TABLE kept", client.auth);
    }
    assertThat(answers).isEqualTo(duckdbAnswer());
    assertThat(answers.getLast()).containsExactly(1, 2, 3, 4);
  }

  @Test
  void aWriteConflictIsAbortedWithSqlState40001NotBadSqlAndTheLoserRetries() throws Exception {
    try (Client first = new Client(); Client second = new Client()) {
      first.sql.executeUpdate("CREATE TABLE account (id INTEGER PRIMARY KEY, balance INTEGER)", first.auth);
      first.sql.executeUpdate("INSERT INTO account VALUES (1, 100)", first.auth);
      FlightSqlClient.Transaction a = first.sql.beginTransaction(first.auth);
      FlightSqlClient.Transaction b = second.sql.beginTransaction(second.auth);
      assertThat(first.sql.executeUpdate("UPDATE account SET balance = balance - 10 WHERE id = 1", a, first.auth))
          .isEqualTo(1);
      // The server sends gRPC's ABORTED, which Arrow Java's Flight client reads as INTERNAL (Flight has no ABORTED);
      // the sqlstate trailer tells it apart. Bad SQL stays INVALID_ARGUMENT, with no such trailer.
      assertThatThrownBy(() -> second.sql.executeUpdate("UPDATE account SET balance = balance + 10 WHERE id = 1", b,
          second.auth)).isInstanceOfSatisfying(FlightRuntimeException.class, e -> {
            assertThat(e.status().code()).isEqualTo(FlightStatusCode.INTERNAL);
            assertThat(e.status().metadata()).isNotNull();
            assertThat(e.status().metadata().get("sqlstate")).isEqualTo("40001");
            assertThat(e.getMessage()).contains("ABORTED").contains("roll back and retry");
          });
      second.sql.rollback(b, second.auth);
      first.sql.commit(a, first.auth);
      assertThatThrownBy(() -> second.sql.executeUpdate("UPDATE no_such_table SET balance = 0", second.auth))
          .isInstanceOfSatisfying(FlightRuntimeException.class, e -> {
            assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT);
            assertThat(e.status().metadata() == null || !e.status().metadata().containsKey("sqlstate")).isTrue();
          });
      FlightSqlClient.Transaction retry = second.sql.beginTransaction(second.auth);
      assertThat(second.sql.executeUpdate("UPDATE account SET balance = balance + 10 WHERE id = 1", retry,
          second.auth)).isEqualTo(1);
      second.sql.commit(retry, second.auth);
      assertThat(first.read(first.sql.execute("SELECT balance FROM account WHERE id = 1", first.auth)))
          .containsExactly(List.of(100));
      first.sql.executeUpdate("DROP TABLE account", first.auth);
    }
    // DuckDB itself: the same two transactions conflict the same way, and DuckDB's driver says so.
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
         Connection other = ((org.duckdb.DuckDBConnection) duckdb).duplicate()) {
      try (Statement statement = duckdb.createStatement()) {
        statement.execute("CREATE TABLE account (id INTEGER PRIMARY KEY, balance INTEGER)");
        statement.execute("INSERT INTO account VALUES (1, 100)");
      }
      duckdb.setAutoCommit(false);
      other.setAutoCommit(false);
      try (Statement a = duckdb.createStatement(); Statement b = other.createStatement()) {
        a.executeUpdate("UPDATE account SET balance = balance - 10 WHERE id = 1");
        assertThatThrownBy(() -> b.executeUpdate("UPDATE account SET balance = balance + 10 WHERE id = 1"))
            .isInstanceOf(java.sql.SQLException.class).hasMessageContaining("onflict");
      }
    }
  }
}
