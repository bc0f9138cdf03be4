package io.thallus.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.thallus.cli.ThallusCli;
import io.thallus.conformance.TypeTable;
import io.thallus.testing.ChildJvm;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code thallus serve --flight-sql-port} as a Python user reaches it: ADBC's Flight SQL driver and pyarrow from
 * PyPI, in a virtual environment this test makes (kept in target/ between runs), and DuckDB's Python package to say
 * what the values must be. The checks themselves are in {@code flightsql/adbc_check.py}.
 */
@Timeout(value = 15, unit = TimeUnit.MINUTES)
class FlightSqlAdbcTest {
  /** Pinned, so a new release of any of them changes nothing here unseen. */
  private static final List<String> PACKAGES = List.of("adbc-driver-flightsql==1.13.0", "adbc-driver-manager==1.13.0",
      "pyarrow==26.0.1", "duckdb==2.0.0");

  @TempDir
  Path temp;

  /** A command run to its end within {@code minutes} (see {@link io.thallus.testing.PythonVenv#run}). */
  static List<String> run(List<String> command, long minutes) throws IOException, InterruptedException {
    return io.thallus.testing.PythonVenv.run(command, minutes);
  }

  /** The virtual environment with the pinned packages, made once; the other ADBC tests share it. */
  static Path python() throws IOException, InterruptedException {
    return io.thallus.testing.PythonVenv.of("adbc-venv", PACKAGES).python();
  }

  @Test
  void adbcQueriesIngestsListsAndKeepsItsSessionAsDuckDBSays() throws Exception {
    Path python = python();
    Path script = temp.resolve("adbc_check.py");
    try (InputStream in = FlightSqlAdbcTest.class.getResourceAsStream("/flightsql/adbc_check.py")) {
      Files.copy(in, script);
    }
    Path sql = Files.writeString(temp.resolve("types.sql"), TypeTable.sql(500));
    Path token = Files.writeString(temp.resolve("token"), "flight-secret\n");
    Path data = Files.createDirectories(temp.resolve("data"));
    try (ChildJvm serve = ChildJvm.start(ThallusCli.class, "serve", "--data-root", data.toString(), "--port", "0",
        "--flight-sql-port", "0", "--token-file", token.toString())) {
      serve.awaitLine("thallus serving", 60);
      String flight = serve.awaitLine("flight sql at ", 30);
      String port = flight.substring(flight.lastIndexOf(':') + 1).strip();
      List<String> output = run(List.of(python.toString(), script.toString(), "grpc://127.0.0.1:" + port,
          "flight-secret", sql.toString()), 5);
      assertThat(output).contains("ok type table values equal DuckDB's", "ok adbc_ingest append",
          "ok ingested values equal DuckDB's", "ok get_objects lists the ingested table",
          "ok a session keeps its temporary tables", "ok commit and rollback", "ok a wrong token is refused",
          "ALL OK");
    }
  }
}
