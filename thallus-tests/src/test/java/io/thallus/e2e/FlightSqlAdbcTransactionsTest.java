package io.thallus.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.thallus.cli.ThallusCli;
import io.thallus.testing.ChildJvm;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code thallus serve --flight-sql-port} under Python ADBC with DBAPI's default, autocommit off: statements the driver
 * keeps prepared across commit() and rollback(), and a write conflict between two sessions that a client tells from
 * bad SQL, each beside DuckDB's own Python package. The checks are in {@code flightsql/transactions_check.py}; the
 * pinned virtual environment is {@link FlightSqlAdbcTest}'s.
 */
@Timeout(value = 15, unit = TimeUnit.MINUTES)
class FlightSqlAdbcTransactionsTest {
  @TempDir
  Path temp;

  @Test
  void adbcKeepsItsPreparedStatementsAcrossTransactionsAndSeesAConflictAsAborted() throws Exception {
    Path python = FlightSqlAdbcTest.python();
    Path script = temp.resolve("transactions_check.py");
    try (InputStream in = FlightSqlAdbcTransactionsTest.class.getResourceAsStream(
        "/flightsql/transactions_check.py")) {
      Files.copy(in, script);
    }
    Path token = Files.writeString(temp.resolve("token"), "flight-secret\n");
    Path data = Files.createDirectories(temp.resolve("data"));
    try (ChildJvm serve = ChildJvm.start(ThallusCli.class, "serve", "--data-root", data.toString(), "--port", "0",
        "--flight-sql-port", "0", "--token-file", token.toString())) {
      serve.awaitLine("thallus serving", 60);
      String flight = serve.awaitLine("flight sql at ", 30);
      String port = flight.substring(flight.lastIndexOf(':') + 1).strip();
      List<String> output = FlightSqlAdbcTest.run(List.of(python.toString(), script.toString(),
          "grpc://127.0.0.1:" + port, "flight-secret"), 5);
      assertThat(output).contains(
          "ok prepared statements kept across commit and rollback answer as DuckDB does",
          "ok every committed row is there",
          "ok a write conflict is an OperationalError naming gRPC's ABORTED",
          "ok its error details carry sqlstate 40001",
          "ok bad SQL is a ProgrammingError naming INVALID_ARGUMENT, unlike a conflict",
          "ok the loser retries and both changes count", "ok DuckDB's own conflict is an OperationalError too",
          "ALL OK");
    }
  }
}
