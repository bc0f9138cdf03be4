package io.thallus.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.ClientOptions;
import io.thallus.Location;
import io.thallus.QueryRequest;
import io.thallus.StatusCode;
import io.thallus.ThallusClient;
import io.thallus.ThallusException;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import io.thallus.ThallusStream;
import io.thallus.internal.protocol.Message;
import io.thallus.internal.protocol.MessageType;
import io.thallus.internal.protocol.Protocol;
import io.thallus.testing.Memory;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Every kind of bad input gets an error that names it, and the server goes on serving with nothing leaked. */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class BadInputTest {
  @TempDir
  Path temp;

  private BufferAllocator allocator;
  private ThallusServer server;

  @BeforeEach
  void start() throws IOException {
    Path data = Files.createDirectories(temp.resolve("data"));
    Files.writeString(data.resolve("ok.csv"), "id,name\n1,a\n2,b\n");
    Files.writeString(temp.resolve("secret.csv"), "id\n42\n");
    allocator = new RootAllocator();
    server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0),
            DuckDBEngine.builder().filesUnder(data).build()).dataRoot(data).build().start();
  }

  @AfterEach
  void stop() {
    try {
      server.close();
    } finally {
      allocator.close();
    }
  }

  /** The server still answers a normal query, and holds no memory once it is done. */
  private void assertStillServing() throws InterruptedException {
    try (BufferAllocator clientMemory = new RootAllocator();
         ThallusClient client = ThallusClient.connect(clientMemory, server.getLocation());
         ThallusStream stream = client.query("SELECT count(*) AS n FROM dataset", "ok.csv")) {
      try (VectorSchemaRoot root = stream.next()) {
        assertThat(root.getVector(0).getObject(0)).isEqualTo(2L);
      }
    }
    Memory.awaitZero(() -> server.memoryUse().allocatedBytes(), "server memory");
  }

  private static Message.Error expectError(RawControlConnection connection) throws IOException {
    Message reply = connection.receive();
    assertThat(reply).isInstanceOf(Message.Error.class);
    return (Message.Error) reply;
  }

  private static Message.Hello hello(int version) {
    return new Message.Hello(version, "raw test", List.of("ipc"), Map.of(), Map.of());
  }

  @Test
  void aMalformedFrameGetsAProtocolErrorAndTheConnectionCloses() throws Exception {
    try (RawControlConnection raw = new RawControlConnection(server.getLocation())) {
      raw.sendBytes(ByteBuffer.allocate(5).putInt(1).put((byte) 99).array());
      Message.Error error = expectError(raw);
      assertThat(error.code()).isEqualTo(StatusCode.PROTOCOL_ERROR);
      assertThat(error.message()).contains("unknown message type 99");
      assertThat(raw.closedByServer()).isTrue();
    }
    assertStillServing();
  }

  @Test
  void anOversizedFrameIsRefusedWithoutBeingRead() throws Exception {
    try (RawControlConnection raw = new RawControlConnection(server.getLocation())) {
      raw.send(hello(Protocol.VERSION));
      assertThat(raw.receive()).isInstanceOf(Message.Welcome.class);
      raw.sendBytes(ByteBuffer.allocate(5).putInt(1 << 30).put((byte) MessageType.OPEN.wireValue()).array());
      Message.Error error = expectError(raw);
      assertThat(error.code()).isEqualTo(StatusCode.PROTOCOL_ERROR);
      assertThat(error.message()).contains("over the maximum of " + Protocol.DEFAULT_SERVER_MAX_FRAME);
      assertThat(raw.closedByServer()).isTrue();
    }
    assertStillServing();
  }

  @Test
  void beforeHelloOnlyASmallFrameIsRead() throws Exception {
    try (RawControlConnection raw = new RawControlConnection(server.getLocation())) {
      raw.sendBytes(ByteBuffer.allocate(5).putInt(Protocol.HELLO_MAX_FRAME + 1)
          .put((byte) MessageType.HELLO.wireValue()).array());
      Message.Error error = expectError(raw);
      assertThat(error.code()).isEqualTo(StatusCode.PROTOCOL_ERROR);
      assertThat(error.message()).contains("over the maximum of " + Protocol.HELLO_MAX_FRAME);
      assertThat(raw.closedByServer()).isTrue();
    }
    assertStillServing();
  }

  @Test
  void anUnknownProtocolVersionIsNamed() throws Exception {
    try (RawControlConnection raw = new RawControlConnection(server.getLocation())) {
      raw.send(hello(99));
      Message.Error error = expectError(raw);
      assertThat(error.code()).isEqualTo(StatusCode.UNIMPLEMENTED);
      assertThat(error.message()).contains("protocol version 99 is not supported")
          .contains("speaks version " + Protocol.VERSION);
      assertThat(raw.closedByServer()).isTrue();
    }
    assertStillServing();
  }

  @Test
  void openBeforeHelloIsRefused() throws Exception {
    try (RawControlConnection raw = new RawControlConnection(server.getLocation())) {
      raw.send(new Message.Open(1, "SELECT 1", "", 10, 1, 0, Map.of()));
      Message.Error error = expectError(raw);
      assertThat(error.code()).isEqualTo(StatusCode.FAILED_PRECONDITION);
      assertThat(error.message()).contains("expected HELLO first");
    }
    assertStillServing();
  }

  @Test
  void aClientOfferingNoKnownTransportIsToldWhatTheServerHas() throws Exception {
    try (RawControlConnection raw = new RawControlConnection(server.getLocation())) {
      raw.send(new Message.Hello(Protocol.VERSION, "raw", List.of("carrier-pigeon"), Map.of(), Map.of()));
      Message.Error error = expectError(raw);
      assertThat(error.code()).isEqualTo(StatusCode.UNIMPLEMENTED);
      assertThat(error.message()).contains("no transport in common").contains("carrier-pigeon").contains("tcp");
    }
  }

  @Test
  void streamErrorsNameTheProblemAndTheConnectionGoesOn() throws Exception {
    try (BufferAllocator clientMemory = new RootAllocator();
         ThallusClient client = ThallusClient.connect(clientMemory, server.getLocation())) {
      assertError(() -> client.query("SELECT * FROM dataset", "missing.parquet"), StatusCode.NOT_FOUND,
          "dataset missing.parquet does not exist");
      assertError(() -> client.query("SELECT * FROM dataset", "../secret.csv"), StatusCode.PERMISSION_DENIED,
          "outside the data root");
      assertError(() -> client.query("SELECT * FROM dataset", temp.resolve("secret.csv").toString()),
          StatusCode.PERMISSION_DENIED, "absolute path");
      assertError(() -> client.query("SELECT * FROM no_such_table"), StatusCode.INVALID_ARGUMENT,
          "no_such_table");
      assertError(() -> client.query("SELECT 1/0::INTEGER + 'x'"), StatusCode.INVALID_ARGUMENT, "");
      assertError(() -> client.query(QueryRequest.builder("SELECT 1").batchRows(Integer.MAX_VALUE).build()),
          StatusCode.INVALID_ARGUMENT, "batch rows must be within");
      assertError(() -> client.query("   "), StatusCode.INVALID_ARGUMENT, "empty SQL");
      try (ThallusStream stream = client.query("SELECT count(*) FROM dataset", "ok.csv")) {
        stream.next().close();
      }
    }
    assertStillServing();
  }

  @Test
  void aServerWithoutDataRootRefusesDatasets() {
    try (ThallusServer bare = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create())
        .build().start();
         BufferAllocator clientMemory = new RootAllocator();
         ThallusClient client = ThallusClient.connect(clientMemory, bare.getLocation())) {
      assertError(() -> client.query("SELECT * FROM dataset", "ok.csv"), StatusCode.PERMISSION_DENIED,
          "without a data root");
    }
  }

  @Test
  void connectingWhereNothingListensIsUnavailable() throws IOException {
    int port;
    try (ServerSocket probe = new ServerSocket(0)) {
      port = probe.getLocalPort();
    }
    try (BufferAllocator clientMemory = new RootAllocator()) {
      assertError(() -> ThallusClient.connect(clientMemory, Location.of("127.0.0.1", port)),
          StatusCode.UNAVAILABLE, "cannot connect to thallus://127.0.0.1:" + port);
      assertError(() -> ThallusClient.connect(clientMemory, server.getLocation().withTransport("nope")),
          StatusCode.NOT_FOUND, "unknown transport nope");
    }
  }

  @Test
  void aServerOnABusyPortSaysSo() {
    int busy = server.getLocation().port();
    assertError(() -> ThallusServer.builder(allocator, Location.of("127.0.0.1", busy), DuckDBEngine.create())
        .build().start(),
        StatusCode.UNAVAILABLE, "cannot listen on 127.0.0.1:" + busy);
  }

  @Test
  void aServerThatGoesAwayMidStreamFailsTheStreamInsteadOfHanging() {
    try (BufferAllocator clientMemory = new RootAllocator();
         ThallusClient client = ThallusClient.connect(clientMemory, server.getLocation(),
             ClientOptions.builder().timeout(Duration.ofSeconds(30)).build());
         ThallusStream stream = client.query(QueryRequest.builder("SELECT i FROM range(1000000000) t(i)")
             .batchRows(4096).build())) {
      stream.next().close();
      server.close();
      assertThatThrownBy(() -> {
        while (stream.hasNext()) {
          stream.next().close();
        }
      }).isInstanceOfSatisfying(ThallusException.class,
          e -> assertThat(e.code()).isIn(StatusCode.UNAVAILABLE, StatusCode.CANCELLED));
    }
  }

  private static void assertError(org.assertj.core.api.ThrowableAssert.ThrowingCallable call, StatusCode code,
      String message) {
    assertThatThrownBy(call).isInstanceOfSatisfying(ThallusException.class, e -> {
      assertThat(e.code()).isEqualTo(code);
      assertThat(e.getMessage()).contains(message);
    });
  }
}
