package io.thallus.flightsql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.ClientOptions;
import io.thallus.ThallusClient;
import io.thallus.conformance.Collected;
import io.thallus.conformance.DuckDBReference;
import io.thallus.conformance.TypeTable;
import io.thallus.conformance.Values;
import io.thallus.ThallusStream;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.CallOption;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.CancelFlightInfoRequest;
import org.apache.arrow.flight.CancelStatus;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.flight.sql.impl.FlightSql;
import org.apache.arrow.flight.sql.util.TableRef;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Arrow Java's own Flight SQL client against a real Thallus server through the front door. */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class FlightSqlClientTest {
  private static FlightSqlFixture fixture;
  private static BufferAllocator clientMemory;
  private static FlightClient flight;
  private static FlightSqlClient sql;
  private static CallOption auth;

  @BeforeAll
  static void start() throws Exception {
    fixture = new FlightSqlFixture();
    clientMemory = new RootAllocator();
    flight = FlightClient.builder(clientMemory, Location.forGrpcInsecure("127.0.0.1", fixture.flightSql.port()))
        .build();
    auth = flight.authenticateBasicToken(FlightSqlFixture.USER, FlightSqlFixture.PASSWORD).orElseThrow();
    sql = new FlightSqlClient(flight);
  }

  @AfterAll
  static void stop() throws Exception {
    sql.close();
    clientMemory.close();
    fixture.close();
  }

  /** Every row of every endpoint of {@code info}, as plain values (dictionaries decoded). */
  private static Collected read(FlightInfo info) throws Exception {
    List<List<Object>> rows = new ArrayList<>();
    int batches = 0;
    for (FlightEndpoint endpoint : info.getEndpoints()) {
      try (FlightStream stream = sql.getStream(endpoint.getTicket(), auth)) {
        while (stream.next()) {
          Values.appendRows(stream.getRoot(), stream.getDictionaryProvider(), rows);
          batches++;
        }
      }
    }
    return new Collected(info.getSchema(), rows, batches);
  }

  private static List<List<Object>> rows(String query) throws Exception {
    return read(sql.execute(query, auth)).rows();
  }

  @Test
  void everyTypeArrivesAsDuckDBExportsIt() throws Exception {
    String query = TypeTable.sql(3000);
    Collected expected = DuckDBReference.run(query, 2048);
    FlightInfo info = sql.execute(query, auth);
    assertThat(info.getSchema().getFields()).extracting(f -> f.getName())
        .isEqualTo(expected.schema().getFields().stream().map(f -> f.getName()).toList());
    Collected actual = read(info);
    assertThat(actual.rows()).hasSize(3000);
    assertThat(actual.rows()).isEqualTo(expected.rows());
  }

  @Test
  void theFlightInfoAnnouncesTheThallusLanesOnlyInItsAppMetadataAndTheyCarryTheSameRows() throws Exception {
    String query = "SELECT i, i * 2 AS twice FROM range(10000) t(i) ORDER BY i";
    FlightInfo info = sql.execute(query, auth);
    assertThat(info.getEndpoints()).hasSize(1);
    FlightEndpoint endpoint = info.getEndpoints().getFirst();
    // A generic Flight client sees no location (it reads on the connection it has), so it tries no lane.
    assertThat(endpoint.getLocations()).isEmpty();
    assertThat(new String(endpoint.getAppMetadata(), java.nio.charset.StandardCharsets.UTF_8))
        .startsWith(LaneAnnouncement.HEADER + "\n");
    FastLanes.Lane lane = FastLanes.of(endpoint).orElseThrow();
    assertThat(lane.locations()).extracting(l -> l.transport().orElseThrow())
        .containsExactlyElementsOf(fixture.server.transports());
    List<List<Object>> overFlight = read(info).rows();
    for (io.thallus.Location location : lane.locations()) {
      try (BufferAllocator memory = new RootAllocator();
           ThallusClient client = ThallusClient.connect(memory, location,
               ClientOptions.builder().token(FlightSqlFixture.TOKEN).build());
           ThallusStream stream = client.query(lane.request())) {
        assertThat(Collected.fromIterator(stream).rows()).as(location.toString()).isEqualTo(overFlight);
      }
    }
    assertThat(DuckDBReference.run(query, 2048).rows()).isEqualTo(overFlight);
  }

  @Test
  void updatesPreparedStatementsAndParameters() throws Exception {
    assertThat(sql.executeUpdate("CREATE TABLE cities (id INTEGER PRIMARY KEY, name VARCHAR, people BIGINT)", auth))
        .isLessThanOrEqualTo(0);
    assertThat(sql.executeUpdate("INSERT INTO cities VALUES (1, 'Lyon', 513275), (2, 'Gent', 262219)", auth))
        .isEqualTo(2);
    // Arrow Java's PreparedStatement.close() sends no call options, so the statements are closed with them here.
    FlightSqlClient.PreparedStatement insert = sql.prepare("INSERT INTO cities VALUES (?, ?, ?)", auth);
    try {
      Schema parameters = insert.getParameterSchema();
      assertThat(parameters.getFields()).extracting(f -> f.getType().toString())
          .containsExactly("Int(32, true)", "Utf8", "Int(64, true)");
      try (VectorSchemaRoot rows = VectorSchemaRoot.create(parameters, clientMemory)) {
        rows.allocateNew();
        ((IntVector) rows.getVector(0)).setSafe(0, 3);
        ((VarCharVector) rows.getVector(1)).setSafe(0, "Brno".getBytes());
        ((BigIntVector) rows.getVector(2)).setSafe(0, 382405);
        ((IntVector) rows.getVector(0)).setSafe(1, 4);
        ((VarCharVector) rows.getVector(1)).setSafe(1, "Bergen".getBytes());
        rows.getVector(2).setNull(1);
        rows.setRowCount(2);
        insert.setParameters(rows);
        assertThat(insert.executeUpdate(auth)).isEqualTo(2);
      }
    } finally {
      insert.close(auth);
    }
    FlightSqlClient.PreparedStatement query = sql.prepare("SELECT name, people FROM cities WHERE id > ? ORDER BY id",
        auth);
    try {
      assertThat(query.getResultSetSchema().getFields()).extracting(f -> f.getName()).containsExactly("name",
          "people");
      try (VectorSchemaRoot row = VectorSchemaRoot.create(query.getParameterSchema(), clientMemory)) {
        ((IntVector) row.getVector(0)).setSafe(0, 1);
        row.setRowCount(1);
        query.setParameters(row);
        assertThat(read(query.execute(auth)).rows()).containsExactly(List.of("Gent", 262219L),
            List.of("Brno", 382405L), java.util.Arrays.asList("Bergen", null));
      }
    } finally {
      query.close(auth);
    }
    assertThat(rows("SELECT count(*), sum(people)::BIGINT FROM cities")).containsExactly(List.of(4L, 1157899L));
  }

  @Test
  void transactionsCommitAndRollBack() throws Exception {
    sql.executeUpdate("CREATE TABLE ledger (amount INTEGER)", auth);
    FlightSqlClient.Transaction rolledBack = sql.beginTransaction(auth);
    assertThat(sql.executeUpdate("INSERT INTO ledger VALUES (1), (2)", rolledBack, auth)).isEqualTo(2);
    assertThat(read(sql.execute("SELECT count(*) FROM ledger", rolledBack, auth)).rows())
        .containsExactly(List.of(2L));
    sql.rollback(rolledBack, auth);
    assertThat(rows("SELECT count(*) FROM ledger")).containsExactly(List.of(0L));

    FlightSqlClient.Transaction committed = sql.beginTransaction(auth);
    sql.executeUpdate("INSERT INTO ledger VALUES (5)", committed, auth);
    sql.commit(committed, auth);
    assertThat(rows("SELECT sum(amount)::BIGINT FROM ledger")).containsExactly(List.of(5L));
    assertThatThrownBy(() -> sql.commit(committed, auth)).isInstanceOfSatisfying(FlightRuntimeException.class,
        e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.NOT_FOUND));
  }

  @Test
  void bulkIngestCreatesAppendsAndReplaces() throws Exception {
    Schema schema = new Schema(List.of(org.apache.arrow.vector.types.pojo.Field.nullable("k",
        new org.apache.arrow.vector.types.pojo.ArrowType.Int(64, true)),
        org.apache.arrow.vector.types.pojo.Field.nullable("v", org.apache.arrow.vector.types.pojo.ArrowType.Utf8
            .INSTANCE)));
    try (VectorSchemaRoot batch = VectorSchemaRoot.create(schema, clientMemory)) {
      batch.allocateNew();
      for (int i = 0; i < 1000; i++) {
        ((BigIntVector) batch.getVector(0)).setSafe(i, i);
        ((VarCharVector) batch.getVector(1)).setSafe(i, ("v" + i).getBytes());
      }
      batch.setRowCount(1000);
      var create = FlightSql.CommandStatementIngest.TableDefinitionOptions.newBuilder()
          .setIfNotExist(FlightSql.CommandStatementIngest.TableDefinitionOptions.TableNotExistOption
              .TABLE_NOT_EXIST_OPTION_CREATE)
          .setIfExists(FlightSql.CommandStatementIngest.TableDefinitionOptions.TableExistsOption
              .TABLE_EXISTS_OPTION_FAIL).build();
      var append = create.toBuilder().setIfExists(FlightSql.CommandStatementIngest.TableDefinitionOptions
          .TableExistsOption.TABLE_EXISTS_OPTION_APPEND).build();
      var replace = create.toBuilder().setIfExists(FlightSql.CommandStatementIngest.TableDefinitionOptions
          .TableExistsOption.TABLE_EXISTS_OPTION_REPLACE).build();
      assertThat(sql.executeIngest(batch, new FlightSqlClient.ExecuteIngestOptions("ingested", create, null, null,
          Map.of()), auth)).isEqualTo(1000);
      assertThat(sql.executeIngest(batch, new FlightSqlClient.ExecuteIngestOptions("ingested", append, null, null,
          Map.of()), auth)).isEqualTo(1000);
      assertThat(rows("SELECT count(*), count(DISTINCT k), max(v) FROM ingested")).containsExactly(
          List.of(2000L, 1000L, "v999"));
      assertThatThrownBy(() -> sql.executeIngest(batch, new FlightSqlClient.ExecuteIngestOptions("ingested",
          create, null, null, Map.of()), auth)).isInstanceOfSatisfying(FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isIn(FlightStatusCode.ALREADY_EXISTS,
                  FlightStatusCode.INVALID_ARGUMENT));
      assertThat(sql.executeIngest(batch, new FlightSqlClient.ExecuteIngestOptions("ingested", replace, null, null,
          Map.of()), auth)).isEqualTo(1000);
      assertThat(rows("SELECT count(*) FROM ingested")).containsExactly(List.of(1000L));

      assertThatThrownBy(() -> sql.executeIngest(batch, new FlightSqlClient.ExecuteIngestOptions("scratch", create,
          true, null, null, Map.of()), auth)).isInstanceOfSatisfying(FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.UNIMPLEMENTED));
      sql.executeUpdate("CREATE TEMP TABLE scratch (k BIGINT, v VARCHAR)", auth);
      var appendOnly = append.toBuilder().setIfNotExist(FlightSql.CommandStatementIngest.TableDefinitionOptions
          .TableNotExistOption.TABLE_NOT_EXIST_OPTION_FAIL).build();
      assertThat(sql.executeIngest(batch, new FlightSqlClient.ExecuteIngestOptions("scratch", appendOnly, true, null,
          null, Map.of()), auth)).isEqualTo(1000);
      assertThat(rows("SELECT count(*) FROM scratch")).containsExactly(List.of(1000L));

      FlightSqlClient.Transaction transaction = sql.beginTransaction(auth);
      sql.executeIngest(batch, new FlightSqlClient.ExecuteIngestOptions("ingested", append, null, null, Map.of()),
          transaction, auth);
      assertThat(read(sql.execute("SELECT count(*) FROM ingested", transaction, auth)).rows())
          .containsExactly(List.of(2000L));
      sql.rollback(transaction, auth);
      assertThat(rows("SELECT count(*) FROM ingested")).containsExactly(List.of(1000L));
    }
  }

  @Test
  void anIngestIntoATableOfAVeryLongNameIsRefusedNamingTheLimit() throws Exception {
    Schema schema = new Schema(List.of(org.apache.arrow.vector.types.pojo.Field.nullable("k",
        new org.apache.arrow.vector.types.pojo.ArrowType.Int(64, true))));
    var create = FlightSql.CommandStatementIngest.TableDefinitionOptions.newBuilder()
        .setIfNotExist(FlightSql.CommandStatementIngest.TableDefinitionOptions.TableNotExistOption
            .TABLE_NOT_EXIST_OPTION_CREATE)
        .setIfExists(FlightSql.CommandStatementIngest.TableDefinitionOptions.TableExistsOption
            .TABLE_EXISTS_OPTION_FAIL).build();
    try (VectorSchemaRoot batch = VectorSchemaRoot.create(schema, clientMemory)) {
      batch.allocateNew();
      ((BigIntVector) batch.getVector(0)).setSafe(0, 1);
      batch.setRowCount(1);
      for (int length : new int[] {3_000, 100_000}) {
        String table = "x".repeat(length);
        assertThatThrownBy(() -> sql.executeIngest(batch, new FlightSqlClient.ExecuteIngestOptions(table, create,
            null, null, Map.of()), auth)).isInstanceOfSatisfying(FlightRuntimeException.class, e -> {
              assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT);
              assertThat(e.status().description()).isEqualTo("INVALID_ARGUMENT: a table name of " + (length + 2)
                  + " characters is over the maximum of 1024 characters");
            });
      }
      assertThat(rows("SELECT count(*) FROM duckdb_tables() WHERE length(table_name) > 1000"))
          .containsExactly(List.of(0L));
    }
  }

  @Test
  void catalogCommandsListWhatDuckDBKnows() throws Exception {
    sql.executeUpdate("CREATE SCHEMA IF NOT EXISTS sales", auth);
    sql.executeUpdate("CREATE TABLE sales.orders (id BIGINT, customer VARCHAR, PRIMARY KEY (id, customer))", auth);
    sql.executeUpdate("CREATE VIEW sales.big AS SELECT * FROM sales.orders WHERE id > 10", auth);
    // DuckDB's catalog of temporary tables is the session's own.
    assertThat(read(sql.getCatalogs(auth)).rows()).containsExactly(List.of("memory"), List.of("temp"));
    assertThat(read(sql.getSchemas("memory", "sal%", auth)).rows()).containsExactly(List.of("memory", "sales"));
    List<List<Object>> tables = read(sql.getTables(null, "sales", null, List.of(), true, auth)).rows();
    assertThat(tables).extracting(row -> row.subList(0, 4)).containsExactly(
        List.of("memory", "sales", "orders", "TABLE"), List.of("memory", "sales", "big", "VIEW"));
    Schema orders = org.apache.arrow.vector.ipc.message.MessageSerializer.deserializeSchema(
        new org.apache.arrow.vector.ipc.ReadChannel(java.nio.channels.Channels.newChannel(
            new java.io.ByteArrayInputStream(java.util.HexFormat.of().parseHex(((String) tables.get(0).get(4)).substring(2))))));
    assertThat(orders.getFields()).extracting(f -> f.getName() + ":" + f.getType())
        .containsExactly("id:Int(64, true)", "customer:Utf8");
    assertThat(read(sql.getTables(null, null, "ord%", List.of("VIEW"), false, auth)).rows()).isEmpty();
    assertThat(read(sql.getPrimaryKeys(TableRef.of("memory", "sales", "orders"), auth)).rows()).containsExactly(
        List.of("memory", "sales", "orders", "id", 1, "orders_id_customer_pkey"),
        List.of("memory", "sales", "orders", "customer", 2, "orders_id_customer_pkey"));
    assertThat(read(sql.getTableTypes(auth)).rows()).containsExactly(List.of("LOCAL TEMPORARY"),
        List.of("TABLE"), List.of("VIEW"));
    assertThat(read(sql.getSqlInfo(new FlightSql.SqlInfo[] {FlightSql.SqlInfo.FLIGHT_SQL_SERVER_NAME}, auth))
        .rows().toString()).contains("Thallus");
    assertThat(read(sql.getXdbcTypeInfo(auth)).rows()).extracting(row -> row.get(0)).contains("INTEGER");
  }

  @Test
  void aSessionKeepsItsTemporaryTablesAndAnotherSessionDoesNotSeeThem() throws Exception {
    sql.executeUpdate("CREATE TEMP TABLE mine AS SELECT 42 AS answer", auth);
    assertThat(rows("SELECT answer FROM mine")).containsExactly(List.of(42));
    try (FlightClient other = FlightClient.builder(clientMemory, Location.forGrpcInsecure("127.0.0.1",
        fixture.flightSql.port())).build(); FlightSqlClient otherSql = new FlightSqlClient(other)) {
      CallOption otherAuth = other.authenticateBasicToken(FlightSqlFixture.USER, FlightSqlFixture.PASSWORD)
          .orElseThrow();
      assertThatThrownBy(() -> otherSql.execute("SELECT answer FROM mine", otherAuth))
          .isInstanceOfSatisfying(FlightRuntimeException.class,
              e -> assertThat(e.getMessage()).contains("mine"));
    }
  }

  @Test
  void aClientThatKeepsNoTokenNorCookieKeepsItsSessionOnItsConnection() throws Exception {
    CallOption token = new org.apache.arrow.flight.grpc.CredentialCallOption(
        new org.apache.arrow.flight.auth2.BearerCredentialWriter(FlightSqlFixture.TOKEN));
    try (FlightClient first = FlightClient.builder(clientMemory, Location.forGrpcInsecure("127.0.0.1",
        fixture.flightSql.port())).build(); FlightSqlClient firstSql = new FlightSqlClient(first);
         FlightClient second = FlightClient.builder(clientMemory, Location.forGrpcInsecure("127.0.0.1",
             fixture.flightSql.port())).build(); FlightSqlClient secondSql = new FlightSqlClient(second)) {
      int before = fixture.flightSql.sessionCount();
      firstSql.executeUpdate("CREATE TEMP TABLE kept AS SELECT 7 AS seven", token);
      for (int i = 0; i < 20; i++) {
        FlightInfo info = firstSql.execute("SELECT seven FROM kept", token);
        try (FlightStream stream = firstSql.getStream(info.getEndpoints().getFirst().getTicket(), token)) {
          assertThat(stream.next()).isTrue();
          assertThat(stream.getRoot().getVector(0).getObject(0)).isEqualTo(7);
        }
      }
      assertThat(fixture.flightSql.sessionCount()).as("one session for the connection's calls").isEqualTo(before + 1);
      assertThatThrownBy(() -> secondSql.execute("SELECT seven FROM kept", token))
          .isInstanceOfSatisfying(FlightRuntimeException.class, e -> assertThat(e.getMessage()).contains("kept"));
    }
  }

  @Test
  void cancelStopsAStatementBeforeOrWhileItRuns() throws Exception {
    FlightInfo info = sql.execute("SELECT count(*) FROM range(10000000000) a(x), range(10) b(y)", auth);
    assertThat(sql.cancelFlightInfo(new CancelFlightInfoRequest(info), auth).getStatus())
        .isEqualTo(CancelStatus.CANCELLED);
    assertThatThrownBy(() -> read(info)).isInstanceOfSatisfying(FlightRuntimeException.class,
        e -> assertThat(e.status().code()).isIn(FlightStatusCode.CANCELLED, FlightStatusCode.NOT_FOUND));
  }

  @Test
  void errorsCarryThallusCodesAsFlightStatusCodes() throws Exception {
    Files.writeString(fixture.dataRoot.resolve("inside.csv"), "x\n1\n");
    assertThat(rows("SELECT count(*) FROM read_csv('" + fixture.dataRoot.toRealPath().resolve("inside.csv")
        + "')")).containsExactly(List.of(1L));
    assertThatThrownBy(() -> rows("SELECT * FROM read_csv('/etc/passwd')"))
        .isInstanceOfSatisfying(FlightRuntimeException.class,
            e -> assertThat(e.getMessage()).contains("Permission Error"));
    assertThatThrownBy(() -> rows("SELECT * FROM no_such_table"))
        .isInstanceOfSatisfying(FlightRuntimeException.class,
            e -> assertThat(e.getMessage()).contains("no_such_table"));
    try (FlightClient stranger = FlightClient.builder(clientMemory, Location.forGrpcInsecure("127.0.0.1",
        fixture.flightSql.port())).build()) {
      assertThatThrownBy(() -> stranger.authenticateBasicToken(FlightSqlFixture.USER, "Wonderland"))
          .isInstanceOfSatisfying(FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.UNAUTHENTICATED));
      FlightSqlClient anonymous = new FlightSqlClient(stranger);
      assertThatThrownBy(() -> anonymous.execute("SELECT 1")).isInstanceOfSatisfying(FlightRuntimeException.class,
          e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.UNAUTHENTICATED));
    }
    assertThat(CallStatus.UNAUTHENTICATED.code()).isEqualTo(FlightStatusCode.UNAUTHENTICATED);
  }
}
