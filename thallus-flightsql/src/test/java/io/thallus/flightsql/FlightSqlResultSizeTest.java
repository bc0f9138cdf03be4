package io.thallus.flightsql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.ClientOptions;
import io.thallus.ThallusClient;
import io.thallus.ThallusStream;
import io.thallus.conformance.Collected;
import io.thallus.conformance.DuckDBReference;
import io.thallus.conformance.Values;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
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
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Results bounded in bytes: a Flight client that takes messages of at most 16 MiB (the default of ADBC, pyarrow and
 * grpc-java; Arrow Java's own client takes any size unless told) reads results whose row-sized batches (64K rows)
 * are far larger, with values equal to DuckDB's own, in messages each under the server's limit; narrow rows still come
 * in the native batches, whole.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class FlightSqlResultSizeTest {
  private static final int CLIENT_LIMIT = 16 << 20;

  private static FlightSqlFixture fixture;
  private static BufferAllocator clientMemory;
  private static FlightSqlClient sql;
  private static CallOption auth;

  @BeforeAll
  static void start() throws Exception {
    fixture = new FlightSqlFixture();
    clientMemory = new RootAllocator();
    FlightClient flight = FlightClient.builder(clientMemory,
        Location.forGrpcInsecure("127.0.0.1", fixture.flightSql.port())).maxInboundMessageSize(CLIENT_LIMIT).build();
    auth = flight.authenticateBasicToken(FlightSqlFixture.USER, FlightSqlFixture.PASSWORD).orElseThrow();
    sql = new FlightSqlClient(flight);
  }

  @AfterAll
  static void stop() throws Exception {
    sql.close();
    clientMemory.close();
    fixture.close();
  }

  /** Every row of {@code info}, each message checked to be within the server's default message limit. */
  private static Collected read(FlightInfo info) throws Exception {
    List<List<Object>> rows = new ArrayList<>();
    int batches = 0;
    for (FlightEndpoint endpoint : info.getEndpoints()) {
      try (FlightStream stream = sql.getStream(endpoint.getTicket(), auth)) {
        while (stream.next()) {
          VectorSchemaRoot root = stream.getRoot();
          try (ArrowRecordBatch records = new VectorUnloader(root).getRecordBatch()) {
            assertThat(records.computeBodyLength()).isLessThanOrEqualTo(ResultMessages.DEFAULT_MAX_BYTES);
          }
          Values.appendRows(root, stream.getDictionaryProvider(), rows);
          batches++;
        }
      }
    }
    return new Collected(null, rows, batches);
  }

  private static void assertEqualsDuckDB(String query, int minimumBatches) throws Exception {
    Collected overFlight = read(sql.execute(query, auth));
    Collected expected = DuckDBReference.run(query, 65536);
    assertThat(overFlight.rows().size()).isEqualTo(expected.rows().size());
    assertThat(overFlight.rows()).isEqualTo(expected.rows());
    assertThat(overFlight.batches()).isGreaterThanOrEqualTo(minimumBatches);
  }

  @Test
  void rowsOfLongTextComeInMessagesTheClientTakes() throws Exception {
    // 100,000 rows of ~310 bytes: a 64K-row batch is ~20 MB.
    assertEqualsDuckDB("SELECT i, repeat('x', 300) || i::VARCHAR AS s FROM range(100000) t(i) ORDER BY i", 3);
  }

  @Test
  void manyBigintColumnsComeInMessagesTheClientTakes() throws Exception {
    // 48 BIGINT columns: 384 bytes a row, ~25 MB a 64K-row batch.
    String columns = IntStream.range(0, 48).mapToObj(c -> "i * " + (c + 1) + " AS c" + c)
        .collect(Collectors.joining(", "));
    assertEqualsDuckDB("SELECT " + columns + " FROM range(70000) t(i) ORDER BY i", 4);
  }

  @Test
  void bigBlobsAndListsComeInMessagesTheClientTakes() throws Exception {
    // 40 blobs of 600 KB (24 MB in one batch), then 9,000 lists of 250 BIGINTs (18 MB).
    assertEqualsDuckDB("SELECT i, repeat(chr(65 + (i % 26)::INTEGER), 600000)::BLOB AS b FROM range(40) t(i) "
        + "ORDER BY i", 3);
    assertEqualsDuckDB("SELECT i, [x + i FOR x IN range(250)] AS l FROM range(9000) t(i) ORDER BY i", 2);
  }

  @Test
  void narrowRowsComeInTheNativeBatchesWhole() throws Exception {
    String query = "SELECT i, i * 2 AS j FROM range(300000) t(i)";
    int nativeBatches = 0;
    try (BufferAllocator memory = new RootAllocator();
         ThallusClient client = ThallusClient.connect(memory, fixture.server.getLocation(),
             ClientOptions.builder().token(FlightSqlFixture.TOKEN).build());
         ThallusStream stream = client.query(query)) {
      while (stream.hasNext()) {
        try (VectorSchemaRoot batch = stream.next()) {
          nativeBatches++;
        }
      }
    }
    Collected overFlight = read(sql.execute(query, auth));
    assertThat(overFlight.rows()).hasSize(300000);
    assertThat(overFlight.batches()).isEqualTo(nativeBatches);
  }

  @Test
  void aRowOverTheLimitFailsNamingIt() throws Exception {
    try (FlightSqlFixture small = new FlightSqlFixture(server -> server,
             door -> door.maxResultMessageBytes(1 << 20));
         BufferAllocator memory = new RootAllocator()) {
      FlightClient flight = FlightClient.builder(memory,
          Location.forGrpcInsecure("127.0.0.1", small.flightSql.port())).build();
      CallOption login = flight.authenticateBasicToken(FlightSqlFixture.USER, FlightSqlFixture.PASSWORD)
          .orElseThrow();
      try (FlightSqlClient client = new FlightSqlClient(flight)) {
        // Rows of 100 KB go out several to a message; the one of 2 MB cannot.
        FlightInfo info = client.execute("SELECT i, repeat('x', CASE WHEN i = 30 THEN 2000000 ELSE 100000 END) AS s "
            + "FROM range(40) t(i) ORDER BY i", login);
        List<Long> seen = new ArrayList<>();
        assertThatThrownBy(() -> {
          try (FlightStream stream = client.getStream(info.getEndpoints().get(0).getTicket(), login)) {
            while (stream.next()) {
              for (int row = 0; row < stream.getRoot().getRowCount(); row++) {
                seen.add((Long) stream.getRoot().getVector(0).getObject(row));
              }
            }
          }
        }).isInstanceOfSatisfying(FlightRuntimeException.class, e -> {
          assertThat(e.status().code()).isEqualTo(FlightStatusCode.RESOURCE_EXHAUSTED);
          assertThat(e.getMessage()).contains("result message limit of 1048576 bytes", "maxResultMessageBytes");
        });
        // The rows before the wide one arrived, in order.
        assertThat(seen).isEqualTo(LongStream.range(0, seen.size()).boxed().toList());
        assertThat(seen.size()).isLessThanOrEqualTo(30);
      }
    }
  }

  @Test
  void theLimitHasAFloor() {
    assertThatThrownBy(() -> ThallusFlightSqlServer.builder(clientMemory, fixture.server.getLocation())
        .maxResultMessageBytes(1000)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxResultMessageBytes must be at least 65536");
  }
}
