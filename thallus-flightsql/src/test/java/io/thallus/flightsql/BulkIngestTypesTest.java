package io.thallus.flightsql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.Any;
import io.thallus.ClientOptions;
import io.thallus.ThallusClient;
import io.thallus.conformance.ArrowTypeCases;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.CallOption;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.PutResult;
import org.apache.arrow.flight.SyncPutListener;
import org.apache.arrow.flight.sql.impl.FlightSql;
import org.apache.arrow.flight.sql.impl.FlightSql.CommandStatementIngest.TableDefinitionOptions;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Flight SQL's bulk ingest (DoPut) of the Arrow types clients send and DuckDB scans (views, dictionaries, run-end
 * encoded, large types; {@link ArrowTypeCases}), put as Arrow Java's Flight client puts a stream with dictionaries:
 * each table reads back as DuckDB makes it from the same batches directly, and a type DuckDB refuses is refused
 * naming the column.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class BulkIngestTypesTest {
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
  }

  @AfterAll
  static void stop() throws Exception {
    flight.close();
    clientMemory.close();
    fixture.close();
  }

  /** Puts the case's batches into {@code table} (created, or appended to); returns the rows the server reports. */
  private static long put(ArrowTypeCases.Case c, String table, TableDefinitionOptions.TableExistsOption ifExists)
      throws Exception {
    FlightSql.CommandStatementIngest command = FlightSql.CommandStatementIngest.newBuilder().setTable(table)
        .setTableDefinitionOptions(TableDefinitionOptions.newBuilder()
            .setIfNotExist(TableDefinitionOptions.TableNotExistOption.TABLE_NOT_EXIST_OPTION_CREATE)
            .setIfExists(ifExists)).build();
    FlightDescriptor descriptor = FlightDescriptor.command(Any.pack(command).toByteArray());
    try (ArrowStreamReader reader = c.open(clientMemory); SyncPutListener ack = new SyncPutListener()) {
      // The stream's dictionaries come with its first batch: read it before the put sends them.
      boolean more = reader.loadNextBatch();
      FlightClient.ClientStreamListener listener = flight.startPut(descriptor, reader.getVectorSchemaRoot(), reader,
          ack, auth);
      while (more) {
        listener.putNext();
        more = reader.loadNextBatch();
      }
      listener.completed();
      listener.getResult();
      try (PutResult result = ack.read()) {
        return FlightSql.DoPutUpdateResult.parseFrom(result.getApplicationMetadata().nioBuffer()).getRecordCount();
      }
    }
  }

  @Test
  void everyArrowTypeDuckDBScansIsPutAsDuckDBImportsIt() throws Exception {
    try (BufferAllocator memory = new RootAllocator();
         ThallusClient client = ThallusClient.connect(memory, fixture.server.getLocation(),
             ClientOptions.builder().token(FlightSqlFixture.TOKEN).build())) {
      for (ArrowTypeCases.Case c : ArrowTypeCases.all()) {
        ArrowTypeCases.Expected expected = ArrowTypeCases.direct(c, 2);
        String table = "put_" + c.name();
        if (expected.refused()) {
          assertThatThrownBy(() -> put(c, table, TableDefinitionOptions.TableExistsOption.TABLE_EXISTS_OPTION_FAIL))
              .as(c.name()).isInstanceOfSatisfying(FlightRuntimeException.class,
                  e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT))
              .hasMessageContaining("column v (Arrow type ");
          continue;
        }
        assertThat(put(c, table, TableDefinitionOptions.TableExistsOption.TABLE_EXISTS_OPTION_FAIL)).as(c.name())
            .isEqualTo(10);
        assertThat(put(c, table, TableDefinitionOptions.TableExistsOption.TABLE_EXISTS_OPTION_APPEND)).as(c.name())
            .isEqualTo(10);
        assertThat(ArrowTypeCases.rows(client, table)).as(c.name()).isEqualTo(expected.rows());
      }
    }
  }
}
