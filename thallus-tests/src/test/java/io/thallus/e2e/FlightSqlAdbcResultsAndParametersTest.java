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
 * Python ADBC against {@code thallus serve --flight-sql-port}, in {@link FlightSqlAdbcTest}'s pinned environment:
 * wide results (long text, 48 BIGINT columns, blobs, lists) read under ADBC's default 16 MiB message limit, and
 * parameters of every type ADBC binds (int32, int64, bytes, dates, timestamps, decimals, text, booleans, doubles,
 * NULL, lists and lists of lists) giving the schema and values DuckDB gives for the same Arrow values. The checks are
 * in {@code flightsql/results_and_parameters_check.py}.
 */
@Timeout(value = 15, unit = TimeUnit.MINUTES)
class FlightSqlAdbcResultsAndParametersTest {
  @TempDir
  Path temp;

  @Test
  void wideResultsFitTheClientsMessagesAndParametersKeepTheirTypes() throws Exception {
    Path python = FlightSqlAdbcTest.python();
    Path script = temp.resolve("results_and_parameters_check.py");
    try (InputStream in = getClass().getResourceAsStream("/flightsql/results_and_parameters_check.py")) {
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
      assertThat(output).contains("ok 300-character text under the message limit",
          "ok 48 BIGINT columns under the message limit", "ok blobs under the message limit",
          "ok lists under the message limit", "ok an int32 parameter", "ok an int64 parameter",
          "ok a bytes parameter", "ok a date parameter plus an interval", "ok list parameters",
          "ok a list of lists parameter", "ALL OK");
    }
  }
}
