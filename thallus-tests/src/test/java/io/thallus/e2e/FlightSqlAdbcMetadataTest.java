package io.thallus.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.thallus.cli.ThallusCli;
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
 * What {@code thallus serve --flight-sql-port} says of its tables to Python clients: ADBC's {@code get_objects}
 * (column type names), Flight SQL commands sent through pyarrow.flight (GetTables with schemas: nullability and a
 * DECIMAL's digits; GetPrimaryKeys), and plain pyarrow.flight's
 * {@code list_flights}, {@code get_flight_info} and {@code do_get} of a table's path, each compared with DuckDB run in
 * the script. The checks are in {@code flightsql/metadata_check.py}; the virtual environment is
 * {@link FlightSqlAdbcTest}'s (the same pinned packages, in the same place).
 */
@Timeout(value = 15, unit = TimeUnit.MINUTES)
class FlightSqlAdbcMetadataTest {
  @TempDir
  Path temp;

  private static List<String> run(List<String> command, long minutes) throws IOException, InterruptedException {
    return FlightSqlAdbcTest.run(command, minutes);
  }

  /** FlightSqlAdbcTest's environment (the same pinned packages, in the same place). */
  private static Path python() throws IOException, InterruptedException {
    return FlightSqlAdbcTest.python();
  }

  @Test
  void adbcAndPyarrowFlightSeeTheTablesAsDuckDBDescribesThem() throws Exception {
    Path python = python();
    Path script = temp.resolve("metadata_check.py");
    try (InputStream in = FlightSqlAdbcMetadataTest.class.getResourceAsStream("/flightsql/metadata_check.py")) {
      Files.copy(in, script);
    }
    Path token = Files.writeString(temp.resolve("token"), "flight-secret\n");
    Path data = Files.createDirectories(temp.resolve("data"));
    try (ChildJvm serve = ChildJvm.start(ThallusCli.class, "serve", "--data-root", data.toString(), "--port", "0",
        "--flight-sql-port", "0", "--token-file", token.toString())) {
      serve.awaitLine("thallus serving", 60);
      String flight = serve.awaitLine("flight sql at ", 30);
      String port = flight.substring(flight.lastIndexOf(':') + 1).strip();
      List<String> output = run(List.of(python.toString(), script.toString(), "grpc://127.0.0.1:" + port,
          "flight-secret"), 5);
      assertThat(output).contains("ok get_objects gives the column type names of pens as DuckDB's information_schema",
          "ok get_objects gives the column type names of animals as DuckDB's information_schema",
          "ok GetTables gives the columns of pens as DuckDB's information_schema",
          "ok GetTables gives the columns of animals as DuckDB's information_schema",
          "ok GetPrimaryKeys lists DuckDB's primary key columns", "ok list_flights lists the tables by path",
          "ok get_flight_info and do_get of memory/main/animals read DuckDB's rows",
          "ok get_flight_info and do_get of animals read DuckDB's rows", "ALL OK");
    }
  }
}
