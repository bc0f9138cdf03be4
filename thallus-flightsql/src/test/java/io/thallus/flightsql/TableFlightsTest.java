package io.thallus.flightsql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.conformance.Collected;
import io.thallus.conformance.DuckDBReference;
import io.thallus.conformance.Values;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.CallOption;
import org.apache.arrow.flight.Criteria;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Plain Arrow Flight's calls (ListFlights, GetFlightInfo and GetSchema of a path, DoGet), as a generic client. */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class TableFlightsTest {
  private static final String BIRDS = "SELECT i AS id, 'bird ' || i AS name FROM range(100) t(i)";

  private static FlightSqlFixture fixture;
  private static BufferAllocator clientMemory;
  private static FlightClient flight;
  private static CallOption auth;

  @BeforeAll
  static void start() throws Exception {
    fixture = new FlightSqlFixture();
    clientMemory = new RootAllocator();
    flight = FlightClient.builder(clientMemory, Location.forGrpcInsecure("127.0.0.1", fixture.flightSql.port()))
        .build();
    auth = flight.authenticateBasicToken(FlightSqlFixture.USER, FlightSqlFixture.PASSWORD).orElseThrow();
    FlightSqlClient sql = new FlightSqlClient(flight);
    sql.executeUpdate("CREATE TABLE birds AS " + BIRDS, auth);
    sql.executeUpdate("CREATE VIEW late_birds AS SELECT name FROM birds WHERE id >= 90", auth);
    sql.executeUpdate("CREATE TEMP TABLE notes (note VARCHAR)", auth);
  }

  @AfterAll
  static void stop() throws Exception {
    flight.close();
    clientMemory.close();
    fixture.close();
  }

  private static List<List<Object>> rows(FlightInfo info) throws Exception {
    List<List<Object>> rows = new ArrayList<>();
    assertThat(info.getEndpoints()).hasSize(1);
    try (FlightStream stream = flight.getStream(info.getEndpoints().getFirst().getTicket(), auth)) {
      while (stream.next()) {
        Values.appendRows(stream.getRoot(), stream.getDictionaryProvider(), rows);
      }
    }
    return rows;
  }

  @Test
  void listFlightsListsTheSessionsTablesAndViewsByPath() {
    List<String> listed = new ArrayList<>();
    for (FlightInfo info : flight.listFlights(Criteria.ALL, auth)) {
      assertThat(info.getDescriptor().isCommand()).isFalse();
      // A listing plans nothing: GetFlightInfo of the path does.
      assertThat(info.getEndpoints()).isEmpty();
      listed.add(info.getDescriptor().getPath() + " " + info.getSchema().getFields().stream()
          .map(field -> field.getName()).toList());
    }
    assertThat(listed).containsExactly("[temp, main, notes] [note]", "[memory, main, birds] [id, name]",
        "[memory, main, late_birds] [name]");
  }

  @Test
  void aPathIsATableToRead() throws Exception {
    Collected expected = DuckDBReference.run(BIRDS, 2048);
    for (FlightDescriptor path : List.of(FlightDescriptor.path("memory", "main", "birds"),
        FlightDescriptor.path("main", "birds"), FlightDescriptor.path("BIRDS"))) {
      FlightInfo info = flight.getInfo(path, auth);
      assertThat(info.getSchema()).as(path.toString()).isEqualTo(flight.getSchema(path, auth).getSchema());
      assertThat(info.getSchema().getFields()).extracting(field -> field.getName() + ":" + field.getType())
          .isEqualTo(expected.schema().getFields().stream().map(field -> field.getName() + ":" + field.getType())
              .toList());
      assertThat(rows(info)).as(path.toString()).isEqualTo(expected.rows());
    }
    assertThat(rows(flight.getInfo(FlightDescriptor.path("late_birds"), auth))).hasSize(10);
  }

  @Test
  void badPathsAndCriteriaAreRefusedSayingWhy() {
    assertThatThrownBy(() -> flight.getInfo(FlightDescriptor.path("no_such_table"), auth))
        .isInstanceOf(FlightRuntimeException.class).hasMessageContaining("no_such_table");
    assertThatThrownBy(() -> flight.getInfo(FlightDescriptor.path("a", "b", "c", "d"), auth))
        .isInstanceOfSatisfying(FlightRuntimeException.class,
            e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT))
        .hasMessageContaining("[catalog, schema, table]");
    assertThatThrownBy(() -> flight.getSchema(FlightDescriptor.path("main", ""), auth))
        .isInstanceOfSatisfying(FlightRuntimeException.class,
            e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT));
    assertThatThrownBy(() -> flight.listFlights(new Criteria("birds".getBytes(StandardCharsets.UTF_8)), auth)
        .forEach(info -> { }))
        .isInstanceOfSatisfying(FlightRuntimeException.class,
            e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT))
        .hasMessageContaining("criteria");
  }
}
