package io.thallus.flightsql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.ClientOptions;
import io.thallus.IngestMode;
import io.thallus.IngestRequest;
import io.thallus.StatusCode;
import io.thallus.ThallusClient;
import io.thallus.ThallusException;
import io.thallus.ThallusStream;
import io.thallus.conformance.Collected;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
import org.apache.arrow.flight.sql.impl.FlightSql;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The Flight SQL door's limits at test scale, against a real Thallus server with small settings: a native frame
 * limit of 64 KiB, so a schema of a few thousand columns is over it.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class FlightSqlLimitsTest {
  private static final int FRAME_LIMIT = 64 << 10;

  private static FlightSqlFixture fixture;
  private static BufferAllocator clientMemory;

  @BeforeAll
  static void start() throws Exception {
    fixture = new FlightSqlFixture(server -> server.maxFrameBytes(FRAME_LIMIT), door -> door);
    clientMemory = new RootAllocator();
  }

  @AfterAll
  static void stop() throws Exception {
    clientMemory.close();
    fixture.close();
  }

  /** A Flight SQL client of its own (its own connection, so its own session), logged in as alice. */
  private static final class Client implements AutoCloseable {
    final FlightClient flight = FlightClient.builder(clientMemory,
        Location.forGrpcInsecure("127.0.0.1", fixture.flightSql.port())).build();
    final FlightSqlClient sql = new FlightSqlClient(flight);
    final CallOption auth = flight.authenticateBasicToken(FlightSqlFixture.USER, FlightSqlFixture.PASSWORD)
        .orElseThrow();

    List<List<Object>> rows(String query) throws Exception {
      return read(sql.execute(query, auth));
    }

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

    @Override
    public void close() throws Exception {
      sql.close();
    }
  }

  private static Schema intColumns(int count) {
    List<Field> fields = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      fields.add(new Field("column_" + i, FieldType.nullable(new ArrowType.Int(32, true)), null));
    }
    return new Schema(fields);
  }

  private static VectorSchemaRoot oneRow(Schema schema, BufferAllocator allocator) {
    VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator);
    root.allocateNew();
    for (int i = 0; i < schema.getFields().size(); i++) {
      ((IntVector) root.getVector(i)).setSafe(0, i);
    }
    root.setRowCount(1);
    return root;
  }

  @Test
  void theNativeClientRefusesAnIngestSchemaOverTheFrameLimitAndItsConnectionGoesOn() {
    try (BufferAllocator memory = new RootAllocator();
         ThallusClient client = ThallusClient.connect(memory, fixture.server.getLocation(),
             ClientOptions.builder().token(FlightSqlFixture.TOKEN).build())) {
      assertThatThrownBy(() -> client.ingest(IngestRequest.of("wide_native", IngestMode.CREATE), intColumns(4000)))
          .isInstanceOfSatisfying(ThallusException.class, e -> {
            assertThat(e.code()).isEqualTo(StatusCode.INVALID_ARGUMENT);
            assertThat(e.getMessage()).contains("over the server's frame limit of " + FRAME_LIMIT + " bytes");
          });
      try (ThallusStream stream = client.query(io.thallus.QueryRequest.of("SELECT 42 AS answer"))) {
        assertThat(Collected.fromIterator(stream).rows()).containsExactly(List.of(42));
      }
    }
  }

  @Test
  void aFlightIngestOfAWideSchemaIsRefusedAndTheSessionGoesOn() throws Exception {
    var create = FlightSql.CommandStatementIngest.TableDefinitionOptions.newBuilder()
        .setIfNotExist(FlightSql.CommandStatementIngest.TableDefinitionOptions.TableNotExistOption
            .TABLE_NOT_EXIST_OPTION_CREATE)
        .setIfExists(FlightSql.CommandStatementIngest.TableDefinitionOptions.TableExistsOption
            .TABLE_EXISTS_OPTION_FAIL).build();
    try (Client client = new Client();
         VectorSchemaRoot wide = oneRow(intColumns(4000), clientMemory)) {
      for (int attempt = 0; attempt < 2; attempt++) {
        assertThatThrownBy(() -> client.sql.executeIngest(wide, new FlightSqlClient.ExecuteIngestOptions("wide_flight",
            create, null, null, Map.of()), client.auth)).isInstanceOfSatisfying(FlightRuntimeException.class, e -> {
              assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT);
              assertThat(e.getMessage()).contains("frame limit of " + FRAME_LIMIT + " bytes");
            });
        assertThat(client.rows("SELECT 42 AS answer")).containsExactly(List.of(42));
      }
      try (VectorSchemaRoot narrow = oneRow(intColumns(3), clientMemory)) {
        assertThat(client.sql.executeIngest(narrow, new FlightSqlClient.ExecuteIngestOptions("narrow_flight", create,
            null, null, Map.of()), client.auth)).isEqualTo(1);
      }
      assertThat(client.rows("SELECT * FROM narrow_flight")).containsExactly(List.of(0, 1, 2));
    }
  }
}
