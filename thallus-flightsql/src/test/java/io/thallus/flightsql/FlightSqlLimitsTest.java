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
  private static final int COMMAND_LIMIT = 256 << 10;
  private static final int DATA_LIMIT = 4 << 20;
  private static final int STATEMENTS_PER_SESSION = 4;
  private static final long STATEMENT_BYTES_PER_SESSION = 64 << 10;

  private static final java.time.Duration PUT_DESCRIPTOR_TIMEOUT = java.time.Duration.ofSeconds(2);

  private static FlightSqlFixture fixture;
  private static BufferAllocator clientMemory;

  @BeforeAll
  static void start() throws Exception {
    fixture = new FlightSqlFixture(server -> server.maxFrameBytes(FRAME_LIMIT), door -> door
        .maxCommandMessageBytes(COMMAND_LIMIT).maxDataMessageBytes(DATA_LIMIT)
        .maxStatementsPerSession(STATEMENTS_PER_SESSION, STATEMENT_BYTES_PER_SESSION)
        .memoryLimit(256 << 20).memoryPerClient(32 << 20).putDescriptorTimeout(PUT_DESCRIPTOR_TIMEOUT)
        // Small native batches (128 KiB of two BIGINTs), so a result is many batches at test scale.
        .clientOptions(ClientOptions.builder().batchRows(8192).build()));
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

  /** Waits for {@code condition} until a generous deadline (the machine may be loaded), then fails naming it. */
  private static void await(String what, java.util.function.BooleanSupplier condition) throws InterruptedException {
    io.thallus.testing.Eventually.await(what, java.time.Duration.ofSeconds(60), condition);
  }

  @Test
  void aCommandMessageOverTheCommandLimitIsRefusedNamingItAndTheSessionGoesOn() throws Exception {
    try (Client client = new Client()) {
      String huge = "SELECT '" + "x".repeat(COMMAND_LIMIT + 1024) + "' AS padding";
      assertThatThrownBy(() -> client.sql.execute(huge, client.auth))
          .isInstanceOfSatisfying(FlightRuntimeException.class, e -> {
            assertThat(e.status().code()).isEqualTo(FlightStatusCode.RESOURCE_EXHAUSTED);
            assertThat(e.getMessage()).contains("command message limit of " + COMMAND_LIMIT + " bytes");
          });
      assertThat(client.rows("SELECT 42 AS answer")).containsExactly(List.of(42));
    }
  }

  @Test
  void dataMessagesLargerThanACommandAreTakenUpToTheDataLimit() throws Exception {
    var create = FlightSql.CommandStatementIngest.TableDefinitionOptions.newBuilder()
        .setIfNotExist(FlightSql.CommandStatementIngest.TableDefinitionOptions.TableNotExistOption
            .TABLE_NOT_EXIST_OPTION_CREATE)
        .setIfExists(FlightSql.CommandStatementIngest.TableDefinitionOptions.TableExistsOption
            .TABLE_EXISTS_OPTION_REPLACE).build();
    try (Client client = new Client();
         VectorSchemaRoot rows = VectorSchemaRoot.create(intColumns(1), clientMemory)) {
      // 2 MiB in one DoPut message: eight times the command limit, half the data limit.
      int count = (2 << 20) / 4;
      IntVector values = (IntVector) rows.getVector(0);
      values.allocateNew(count);
      for (int i = 0; i < count; i++) {
        values.set(i, i);
      }
      rows.setRowCount(count);
      assertThat(client.sql.executeIngest(rows, new FlightSqlClient.ExecuteIngestOptions("big_batch", create, null,
          null, Map.of()), client.auth)).isEqualTo(count);
      assertThat(client.rows("SELECT count(*), max(column_0) FROM big_batch"))
          .containsExactly(List.of((long) count, count - 1));
      // Over the data limit: refused by gRPC before the message's body is read.
      int over = (DATA_LIMIT + (1 << 20)) / 4;
      values.allocateNew(over);
      for (int i = 0; i < over; i++) {
        values.set(i, i);
      }
      rows.setRowCount(over);
      assertThatThrownBy(() -> client.sql.executeIngest(rows, new FlightSqlClient.ExecuteIngestOptions("big_batch",
          create, null, null, Map.of()), client.auth)).isInstanceOfSatisfying(FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.RESOURCE_EXHAUSTED));
    }
    // gRPC may end the HTTP/2 connection of a client refused mid-message (GOAWAY): ask on a new one.
    try (Client client = new Client()) {
      assertThat(client.rows("SELECT count(*) FROM big_batch")).containsExactly(List.of(524288L));
    }
  }

  @Test
  void aDoPutBatchCountsAgainstTheSessionsMemoryAsItArrives() throws Exception {
    var create = FlightSql.CommandStatementIngest.TableDefinitionOptions.newBuilder()
        .setIfNotExist(FlightSql.CommandStatementIngest.TableDefinitionOptions.TableNotExistOption
            .TABLE_NOT_EXIST_OPTION_CREATE)
        .setIfExists(FlightSql.CommandStatementIngest.TableDefinitionOptions.TableExistsOption
            .TABLE_EXISTS_OPTION_APPEND).build();
    // A session budget of 3 MiB (its native connection's shared memory included) under a data limit of 4 MiB: a
    // 3.5 MiB message gets through gRPC, not into the session.
    try (FlightSqlFixture small = new FlightSqlFixture(server -> server, door -> door.maxDataMessageBytes(DATA_LIMIT)
             .memoryPerClient(3 << 20));
         FlightClient flight = FlightClient.builder(clientMemory,
             Location.forGrpcInsecure("127.0.0.1", small.flightSql.port())).build();
         FlightSqlClient sql = new FlightSqlClient(flight);
         VectorSchemaRoot rows = VectorSchemaRoot.create(intColumns(1), clientMemory)) {
      CallOption auth = flight.authenticateBasicToken(FlightSqlFixture.USER, FlightSqlFixture.PASSWORD).orElseThrow();
      IntVector values = (IntVector) rows.getVector(0);
      for (int count : new int[] {(7 << 19) / 4, (256 << 10) / 4}) {
        values.allocateNew(count);
        for (int i = 0; i < count; i++) {
          values.set(i, i);
        }
        rows.setRowCount(count);
        if (count > (3 << 20) / 4) {
          assertThatThrownBy(() -> sql.executeIngest(rows, new FlightSqlClient.ExecuteIngestOptions("budgeted",
              create, null, null, Map.of()), auth)).isInstanceOfSatisfying(FlightRuntimeException.class, e -> {
                assertThat(e.status().code()).isEqualTo(FlightStatusCode.RESOURCE_EXHAUSTED);
                assertThat(e.getMessage()).contains("memoryPerClient");
              });
        } else {
          // The same session goes on, and a batch inside its budget goes in whole.
          assertThat(sql.executeIngest(rows, new FlightSqlClient.ExecuteIngestOptions("budgeted", create, null,
              null, Map.of()), auth)).isEqualTo(count);
        }
      }
      try (FlightStream stream = sql.getStream(sql.execute("SELECT count(*), max(column_0) FROM budgeted", auth)
          .getEndpoints().getFirst().getTicket(), auth)) {
        List<List<Object>> got = new ArrayList<>();
        while (stream.next()) {
          io.thallus.conformance.Values.appendRows(stream.getRoot(), stream.getDictionaryProvider(), got);
        }
        assertThat(got).containsExactly(List.of((long) (256 << 10) / 4, (256 << 10) / 4 - 1));
      }
    }
  }

  /**
   * A DoPut that never sends its first message (the descriptor naming its command) is answered TIMED_OUT at the
   * put-descriptor timeout, naming what was missing, so its call ends on the server and its client's connection,
   * and the session it opened, can close (issue 33: such calls kept the soak's sessions open past its end).
   */
  @Test
  void aDoPutThatSendsNothingEndsAtThePutDescriptorTimeoutAndItsConnectionCloses() throws Exception {
    int sessionsBefore = fixture.flightSql.sessionCount();
    io.grpc.ManagedChannel channel = io.grpc.netty.NettyChannelBuilder.forAddress("127.0.0.1",
        fixture.flightSql.port()).usePlaintext().build();
    try {
      io.grpc.Metadata headers = new io.grpc.Metadata();
      headers.put(io.grpc.Metadata.Key.of("authorization", io.grpc.Metadata.ASCII_STRING_MARSHALLER),
          "Bearer " + FlightSqlFixture.TOKEN);
      var stub = org.apache.arrow.flight.impl.FlightServiceGrpc.newStub(channel)
          .withInterceptors(io.grpc.stub.MetadataUtils.newAttachHeadersInterceptor(headers));
      java.util.concurrent.CompletableFuture<Throwable> ended = new java.util.concurrent.CompletableFuture<>();
      long start = System.nanoTime();
      // The client's half stays open and empty: no descriptor, no batch, no end.
      stub.doPut(new io.grpc.stub.StreamObserver<>() {
        @Override
        public void onNext(org.apache.arrow.flight.impl.Flight.PutResult value) {
        }

        @Override
        public void onError(Throwable t) {
          ended.complete(t);
        }

        @Override
        public void onCompleted() {
          ended.complete(null);
        }
      });
      Throwable answer = ended.get(60, TimeUnit.SECONDS);
      assertThat(System.nanoTime() - start).as("not answered before the timeout")
          .isGreaterThanOrEqualTo(PUT_DESCRIPTOR_TIMEOUT.toNanos());
      assertThat(answer).isInstanceOfSatisfying(io.grpc.StatusRuntimeException.class, e -> {
        assertThat(e.getStatus().getCode()).isEqualTo(io.grpc.Status.Code.DEADLINE_EXCEEDED);
        assertThat(e.getStatus().getDescription()).contains("no FlightDescriptor")
            .contains(PUT_DESCRIPTOR_TIMEOUT.toMillis() + " ms");
      });
      // A graceful shutdown waits for the client's calls: none is left, so it ends, and the server's session with it.
      channel.shutdown();
      assertThat(channel.awaitTermination(60, TimeUnit.SECONDS)).as("the channel's calls all ended").isTrue();
      await("the DoPut's session ended with its connection", () ->
          fixture.flightSql.sessionCount() == sessionsBefore);
    } finally {
      channel.shutdownNow();
    }
    try (Client client = new Client()) {
      assertThat(client.rows("SELECT 42 AS answer")).containsExactly(List.of(42));
    }
  }

  @Test
  void theLeastRecentlyUsedStatementHandleIsEvictedAndAnswersNotFoundNamingIt() throws Exception {
    try (Client client = new Client()) {
      List<FlightSqlClient.PreparedStatement> prepared = new ArrayList<>();
      for (int i = 0; i < STATEMENTS_PER_SESSION + 2; i++) {
        prepared.add(client.sql.prepare("SELECT " + i + " AS n", client.auth));
      }
      // The two oldest were closed to make room, and say so by their handles; the newest work.
      for (int i = 0; i < 2; i++) {
        FlightSqlClient.PreparedStatement evicted = prepared.get(i);
        assertThatThrownBy(() -> evicted.execute(client.auth)).isInstanceOfSatisfying(FlightRuntimeException.class,
            e -> {
              assertThat(e.status().code()).isEqualTo(FlightStatusCode.NOT_FOUND);
              assertThat(e.getMessage()).containsPattern("prepared statement [0-9a-f]{32} was closed to make room");
            });
      }
      int newest = prepared.size() - 1;
      assertThat(client.read(prepared.get(newest).execute(client.auth))).containsExactly(List.of(newest));
      // By bytes too: statements of 40 KB of SQL, against 64 KiB a session, keep one at a time.
      String padding = "p".repeat(20_000);
      FlightInfo first = client.sql.execute("SELECT 1 AS one, '" + padding + "' AS padding", client.auth);
      FlightInfo second = client.sql.execute("SELECT 2 AS two, '" + padding + "' AS padding", client.auth);
      assertThat(client.read(second)).containsExactly(List.of(2, padding));
      assertThatThrownBy(() -> client.read(first)).isInstanceOfSatisfying(FlightRuntimeException.class,
          e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.NOT_FOUND));
      assertThat(fixture.flightSql.statementCount()).isLessThanOrEqualTo(STATEMENTS_PER_SESSION);
      for (FlightSqlClient.PreparedStatement statement : prepared) {
        statement.close(client.auth);
      }
    }
  }

  @Test
  void unreadDoGetsHoldNoThreadAndANewClientIsStillServed() throws Exception {
    int clients = 10;
    int perClient = 4;
    String query = "SELECT i, i + 1 AS j FROM range(3000000) t(i)";
    List<Client> readers = new ArrayList<>();
    List<FlightStream> unread = new ArrayList<>();
    try {
      for (int c = 0; c < clients; c++) {
        readers.add(new Client());
      }
      // Every session made and used once before counting threads.
      for (Client reader : readers) {
        assertThat(reader.rows("SELECT 1 AS one")).containsExactly(List.of(1));
      }
      long memoryBefore = fixture.flightSql.memoryInUse();
      int statementsBefore = fixture.flightSql.statementCount();
      var threads = java.lang.management.ManagementFactory.getThreadMXBean();
      int threadsBefore = threads.getThreadCount();
      for (Client reader : readers) {
        for (int i = 0; i < perClient; i++) {
          FlightInfo info = reader.sql.execute(query, reader.auth);
          unread.add(reader.sql.getStream(info.getEndpoints().getFirst().getTicket(), reader.auth));
        }
      }
      int results = clients * perClient;
      await(results + " results in flight", () -> fixture.flightSql.resultsInFlight() == results);
      int threadsHeld = threads.getThreadCount() - threadsBefore;
      long memoryHeld = fixture.flightSql.memoryInUse() - memoryBefore;
      System.out.printf("%d unread DoGets: %d more threads, %d KiB more Arrow memory in the Flight SQL server%n",
          results, threadsHeld, memoryHeld >> 10);
      // The old scheme held one blocked thread per unread result.
      assertThat(threadsHeld).isLessThan(results / 2);
      try (Client newcomer = new Client()) {
        assertThat(newcomer.rows("SELECT 42 AS answer")).containsExactly(List.of(42));
      }
      for (FlightStream stream : unread) {
        stream.cancel("done", null);
      }
      await("every result ended", () -> fixture.flightSql.resultsInFlight() == 0);
      await("the results' memory returned", () -> fixture.flightSql.memoryInUse() <= memoryBefore);
      assertThat(fixture.flightSql.statementCount()).isEqualTo(statementsBefore);
    } finally {
      for (FlightStream stream : unread) {
        try {
          stream.close();
        } catch (Exception e) {
          // Cancelled above: closing drains what remains.
        }
      }
      for (Client reader : readers) {
        reader.close();
      }
    }
  }

  /**
   * A client that sends its credentials with every call (never the session's token) reaches its session only through
   * its connection: when that connection drops with DoGets unread, the session ends at once, not at its idle timeout,
   * and its native connection's memory returns. A session its client named by its token outlives its connection.
   */
  @Test
  void aSessionKnownOnlyByItsConnectionEndsWithItAndItsMemoryReturns() throws Exception {
    int sessionsBefore = fixture.flightSql.sessionCount();
    long nativeBefore = fixture.server.memoryUse().connectionBytes();
    CallOption token = new org.apache.arrow.flight.grpc.CredentialCallOption(
        new org.apache.arrow.flight.auth2.BearerCredentialWriter(FlightSqlFixture.TOKEN));
    io.grpc.ManagedChannel channel = io.grpc.netty.NettyChannelBuilder.forAddress("127.0.0.1",
        fixture.flightSql.port()).usePlaintext().build();
    FlightClient flight = org.apache.arrow.flight.FlightGrpcUtils.createFlightClient(clientMemory, channel);
    FlightSqlClient sql = new FlightSqlClient(flight);
    List<FlightStream> unread = new ArrayList<>();
    try {
      for (int i = 0; i < 4; i++) {
        FlightInfo info = sql.execute("SELECT i, i * 2 AS j FROM range(100000000) t(i)", token);
        unread.add(sql.getStream(info.getEndpoints().getFirst().getTicket(), token));
      }
      assertThat(fixture.flightSql.sessionCount()).isEqualTo(sessionsBefore + 1);
      await("the unread results' batches on their way", () ->
          fixture.server.memoryUse().connectionBytes() > nativeBefore);
      // The client goes away without a word: its connection drops with the streams unread.
      channel.shutdownNow();
      await("the session ended", () -> fixture.flightSql.sessionCount() == sessionsBefore);
      await("its native connection's memory returned", () ->
          fixture.server.memoryUse().connectionBytes() <= nativeBefore);
    } finally {
      channel.shutdownNow();
      for (FlightStream stream : unread) {
        try {
          stream.close();
        } catch (Exception e) {
          // Its connection is gone.
        }
      }
    }

    CallOption named;
    try (Client client = new Client()) {
      named = client.auth;
      assertThat(client.rows("SELECT 7 AS seven")).containsExactly(List.of(7));
    }
    try (FlightClient again = FlightClient.builder(clientMemory,
        Location.forGrpcInsecure("127.0.0.1", fixture.flightSql.port())).build();
         FlightSqlClient sqlAgain = new FlightSqlClient(again)) {
      int sessions = fixture.flightSql.sessionCount();
      FlightInfo info = sqlAgain.execute("SELECT 8 AS eight", named);
      try (FlightStream stream = sqlAgain.getStream(info.getEndpoints().getFirst().getTicket(), named)) {
        assertThat(stream.next()).isTrue();
        assertThat(stream.getRoot().getVector(0).getObject(0)).isEqualTo(8);
      }
      assertThat(fixture.flightSql.sessionCount()).as("the named session, reused from a new connection")
          .isEqualTo(sessions);
    }
  }

  @Test
  void aSessionWhoseNativeConnectionWasLostIsClosedAndItsClientLogsInAgain() throws Exception {
    try (BufferAllocator memory = new RootAllocator()) {
      java.nio.file.Path root = java.nio.file.Files.createTempDirectory("thallus-flightsql-lost");
      io.thallus.server.ThallusServer first = nativeServer(memory, root, 0);
      int port = first.getLocation().port();
      io.thallus.server.ThallusServer second = null;
      try (ThallusFlightSqlServer door = ThallusFlightSqlServer.builder(memory, first.getLocation()).build().start();
           FlightClient flight = FlightClient.builder(clientMemory,
               Location.forGrpcInsecure("127.0.0.1", door.port())).build();
           FlightSqlClient sql = new FlightSqlClient(flight)) {
        CallOption auth = flight.authenticateBasicToken(FlightSqlFixture.USER, FlightSqlFixture.PASSWORD)
            .orElseThrow();
        sql.prepare("SELECT 1 AS one", auth);
        assertThat(door.sessionCount()).isEqualTo(1);
        assertThat(door.statementCount()).isEqualTo(1);
        // The native server goes away: the door closes the session and its statements.
        first.close();
        await("the session closed", () -> door.sessionCount() == 0);
        assertThat(door.statementCount()).isZero();
        second = nativeServer(memory, root, port);
        assertThatThrownBy(() -> sql.execute("SELECT 1", auth)).isInstanceOfSatisfying(FlightRuntimeException.class,
            e -> {
              assertThat(e.status().code()).isEqualTo(FlightStatusCode.UNAUTHENTICATED);
              assertThat(e.getMessage()).contains("connection to the Thallus server was lost");
            });
        CallOption again = flight.authenticateBasicToken(FlightSqlFixture.USER, FlightSqlFixture.PASSWORD)
            .orElseThrow();
        FlightInfo info = sql.execute("SELECT 42 AS answer", again);
        try (FlightStream stream = sql.getStream(info.getEndpoints().getFirst().getTicket(), again)) {
          assertThat(stream.next()).isTrue();
          assertThat(stream.getRoot().getVector(0).getObject(0)).isEqualTo(42);
        }
      } finally {
        first.close();
        if (second != null) {
          second.close();
        }
      }
    }
  }

  private static io.thallus.server.ThallusServer nativeServer(BufferAllocator memory, java.nio.file.Path root,
      int port) {
    return io.thallus.server.ThallusServer.builder(memory, io.thallus.Location.of("127.0.0.1", port),
            io.thallus.duckdb.DuckDBEngine.builder().filesUnder(root).build()).dataRoot(root)
        .authentication(io.thallus.server.Authentication.users(
            Map.of(FlightSqlFixture.USER, FlightSqlFixture.PASSWORD)))
        .build().start();
  }
}
