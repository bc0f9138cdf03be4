package io.thallus.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.thallus.cli.ThallusCli;
import io.thallus.testing.ChildJvm;
import io.thallus.testing.PythonVenv;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * pandas and polars as their users write and read a table of {@code thallus serve --flight-sql-port}: polars'
 * {@code write_database}/{@code read_database} and pandas' {@code to_sql} (a Categorical column among others) and
 * {@code read_sql}, through ADBC's Flight SQL driver, in a virtual environment of pinned packages from PyPI (kept in
 * target/ between runs); DuckDB's Python package, run on the same Arrow data, says what each table must hold. The
 * checks are in {@code flightsql/dataframe_check.py}.
 */
@Timeout(value = 15, unit = TimeUnit.MINUTES)
class FlightSqlDataFrameTest {
  /** Pinned, so a new release of any of them changes nothing here unseen (duckdb as the server's DuckDB). */
  private static final List<String> PACKAGES = List.of("adbc-driver-flightsql==1.13.0",
      "adbc-driver-manager==1.13.0", "pyarrow==26.0.1", "duckdb==2.0.0", "pandas==3.1.1", "polars==2.1.0");

  @TempDir
  Path temp;

  @Test
  void pandasAndPolarsWriteAndReadTablesAsDuckDBMakesThem() throws Exception {
    PythonVenv python = PythonVenv.of("dataframe-venv", PACKAGES);
    Path script = temp.resolve("dataframe_check.py");
    try (InputStream in = FlightSqlDataFrameTest.class.getResourceAsStream("/flightsql/dataframe_check.py")) {
      Files.copy(in, script);
    }
    Path token = Files.writeString(temp.resolve("token"), "frame-secret\n");
    Path data = Files.createDirectories(temp.resolve("data"));
    try (ChildJvm serve = ChildJvm.start(ThallusCli.class, "serve", "--data-root", data.toString(), "--port", "0",
        "--flight-sql-port", "0", "--token-file", token.toString())) {
      serve.awaitLine("thallus serving", 60);
      String flight = serve.awaitLine("flight sql at ", 30);
      String port = flight.substring(flight.lastIndexOf(':') + 1).strip();
      List<String> output = python.runScript(script, List.of("grpc://127.0.0.1:" + port, "frame-secret"), 5);
      assertThat(output).contains("ok polars write_database", "ok polars read_database equals DuckDB's",
          "ok polars column types equal DuckDB's", "ok polars append", "ok pandas to_sql with a Categorical",
          "ok pandas read_sql values equal DuckDB's", "ok pandas column types equal DuckDB's", "ok pandas append",
          "ALL OK");
    }
  }
}
