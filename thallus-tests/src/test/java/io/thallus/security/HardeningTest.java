package io.thallus.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.PooledByteBufAllocator;
import io.thallus.server.Authentication;
import io.thallus.ClientOptions;
import io.thallus.Location;
import io.thallus.QueryRequest;
import io.thallus.StatusCode;
import io.thallus.ThallusClient;
import io.thallus.ThallusException;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import io.thallus.ThallusStream;
import io.thallus.e2e.RawControlConnection;
import io.thallus.internal.protocol.Message;
import io.thallus.internal.protocol.MessageType;
import io.thallus.internal.protocol.Protocol;
import io.thallus.testing.Memory;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The attacks of the hardening issue, each against a real server on loopback with real sockets: what broke the
 * server before, and what a client now sees instead. Each ends with an honest client's query answered correctly
 * (compared with DuckDB run directly).
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class HardeningTest {
  private static final String TOKEN = "hardening-token";
  private static final String HONEST_SQL = "SELECT sum(i * 3 - 1) AS s FROM range(2000000) t(i)";

  private static ThallusServer.Builder server(BufferAllocator allocator) {
    return ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create())
        .authentication(Authentication.token(TOKEN));
  }

  private static ClientOptions honest() {
    return ClientOptions.builder().token(TOKEN).build();
  }

  /** An honest client's query gives what DuckDB gives run directly. */
  private static void assertHonestClientServed(ThallusServer server, String transport) throws SQLException {
    try (BufferAllocator memory = new RootAllocator();
         ThallusClient client = ThallusClient.connect(memory, server.getLocation().withTransport(transport), honest());
         ThallusStream stream = client.query(QueryRequest.of(HONEST_SQL));
         VectorSchemaRoot root = stream.next()) {
      assertThat(((Number) root.getVector(0).getObject(0)).longValue()).isEqualTo(duckdb(HONEST_SQL));
    }
  }

  private static long duckdb(String sql) throws SQLException {
    try (Connection connection = DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = connection.createStatement();
         ResultSet rows = statement.executeQuery(sql)) {
      rows.next();
      return rows.getLong(1);
    }
  }

  private static Message.Hello hello(String transport) {
    return new Message.Hello(Protocol.VERSION, "attacker", List.of(transport), Map.of(), Map.of("token", TOKEN));
  }

  private static RawControlConnection authenticated(ThallusServer server, String transport) throws IOException {
    RawControlConnection raw = new RawControlConnection(server.getLocation());
    raw.send(hello(transport));
    assertThat(raw.receive()).isInstanceOf(Message.Welcome.class);
    return raw;
  }

  private static Message.Open open(int streamId, String sql, int batchRows, int credits) {
    return new Message.Open(streamId, sql, "", batchRows, credits, 0, Map.of());
  }

  /** Waits up to {@code timeout} for the server to close {@code socket}; true once it has. */
  private static boolean closedWithin(Socket socket, Duration timeout) throws IOException {
    long deadline = System.nanoTime() + timeout.toNanos();
    InputStream in = socket.getInputStream();
    byte[] sink = new byte[4096];
    while (System.nanoTime() < deadline) {
      socket.setSoTimeout((int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
      try {
        if (in.read(sink) < 0) {
          return true;
        }
      } catch (SocketTimeoutException e) {
        return false;
      } catch (IOException reset) {
        return true;
      }
    }
    return false;
  }

  /** Attack 2: credits are capped; a client that reads nothing is held to a bounded amount of server memory. */
  @ParameterizedTest
  @ValueSource(strings = {"ipc", "tcp"})
  void aClientThatNeverReadsCannotGrowTheServer(String transport) throws Exception {
    long perClient = 64L << 20;
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = server(allocator).memoryPerClient(perClient).build().start()) {
      long nettyBefore = PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory();
      try (RawControlConnection greedy = authenticated(server, transport)) {
        greedy.send(open(1, "SELECT * FROM range(10000000000)", 65536, Integer.MAX_VALUE));
        assertThat(greedy.receive()).isInstanceOfSatisfying(Message.Error.class, e -> {
          assertThat(e.code()).isEqualTo(StatusCode.INVALID_ARGUMENT);
          assertThat(e.message()).contains("at most 256 credits");
        });
        // As many credits as allowed, then never read: ipc batches travel in frames, and over tcp batches of one
        // row travel inline in frames too.
        int batchRows = transport.equals("ipc") ? 65536 : 1;
        greedy.send(open(3, "SELECT * FROM range(10000000000)", batchRows, 256));
        greedy.send(open(5, "SELECT i, 'row ' || i FROM range(10000000000) t(i)", batchRows, 256));
        // Once the credits are used the server stops producing: what it holds settles below the client's budget.
        // Without the bound it would grow past it (or never settle).
        long held = Memory.awaitSteady(() -> server.memoryUse().allocatedBytes()
            + PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory() - nettyBefore, Duration.ofMillis(500),
            "server memory for a client that reads nothing");
        assertThat(held).as("server memory for a client that reads nothing").isLessThan(perClient);
        assertHonestClientServed(server, transport);
      }
      Memory.awaitZero(() -> server.memoryUse().allocatedBytes(), "server memory after the greedy client left");
    }
  }

  /** Attack 3: silent sockets neither count as clients nor stay; a dribbled HELLO is cut off at the deadline. */
  @Test
  void strangersThatDoNotAuthenticateAreClosedAndDoNotCountAsClients() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = server(allocator).maxConnections(2)
             .admission(io.thallus.server.Admission.builder().maxStrangers(8).handshakeTimeout(Duration.ofMillis(1500))
                 .build())
             .build().start()) {
      List<Socket> silent = new ArrayList<>();
      try {
        for (int i = 0; i < 20; i++) {
          silent.add(new Socket("127.0.0.1", server.getLocation().port()));
        }
        // More than maxConnections strangers, yet two clients still get in: strangers are not clients.
        assertHonestClientServed(server, "tcp");
        try (BufferAllocator memory = new RootAllocator();
             ThallusClient first = ThallusClient.connect(memory, server.getLocation(), honest());
             ThallusClient second = ThallusClient.connect(memory, server.getLocation(), honest())) {
          assertThatThrownBy(() -> ThallusClient.connect(memory, server.getLocation(), honest()).close())
              .isInstanceOfSatisfying(ThallusException.class,
                  e -> assertThat(e.code()).isEqualTo(StatusCode.RESOURCE_EXHAUSTED))
              .hasMessageContaining("maximum of 2 clients");
        }
        // The oldest strangers were let go as newer ones (and the clients) arrived; the rest go at the deadline.
        assertThat(closedWithin(silent.get(0), Duration.ofMillis(200))).as("the oldest stranger").isTrue();
        for (Socket socket : silent) {
          assertThat(closedWithin(socket, Duration.ofSeconds(3))).as("a stranger past the deadline").isTrue();
        }
      } finally {
        for (Socket socket : silent) {
          socket.close();
        }
      }
      try (Socket dribbler = new Socket("127.0.0.1", server.getLocation().port())) {
        OutputStream out = dribbler.getOutputStream();
        long start = System.nanoTime();
        boolean cutOff = false;
        for (int i = 0; i < 40 && !cutOff; i++) {
          try {
            out.write(0);
            out.flush();
            Thread.sleep(100);
          } catch (IOException closed) {
            cutOff = true;
          }
          cutOff |= closedWithin(dribbler, Duration.ofMillis(1));
        }
        assertThat(cutOff).as("a HELLO sent a byte at a time is cut off").isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
      }
      assertHonestClientServed(server, "tcp");
    }
  }

  /** Attack 3: an authenticated connection that sits idle with no stream is closed; one with a stream is not. */
  @Test
  void anIdleConnectionWithNoStreamIsClosed() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = server(allocator).connectionIdleTimeout(Duration.ofMillis(700)).build().start();
         RawControlConnection idle = authenticated(server, "ipc");
         RawControlConnection waiting = authenticated(server, "ipc")) {
      waiting.send(open(1, "SELECT 1", 16, 0));
      assertThat(waiting.receive()).isInstanceOf(Message.Opened.class);
      Message closing = idle.receive();
      assertThat(closing).isInstanceOfSatisfying(Message.Error.class, e -> {
        assertThat(e.code()).isEqualTo(StatusCode.DEADLINE_EXCEEDED);
        assertThat(e.message()).contains("no stream open");
      });
      assertThat(idle.closedByServer()).isTrue();
      waiting.send(new Message.Next(1, 1, new long[0]));
      assertThat(waiting.receive()).as("the connection with a stream still works").isInstanceOf(Message.Batch.class);
    }
  }

  /**
   * Attack 4: streams nobody reads hold no engine thread, and the server's open streams have a bound: the 65th of
   * 64 is refused, and honest clients are served meanwhile.
   */
  @Test
  void unreadStreamsHoldNoThreadAndAreBounded() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = server(allocator).engineThreads(4).maxStreams(64).maxStreamsPerConnection(32)
             .build().start()) {
      List<RawControlConnection> greedy = new ArrayList<>();
      try {
        for (int c = 0; c < 2; c++) {
          RawControlConnection raw = authenticated(server, "ipc");
          greedy.add(raw);
          for (int s = 0; s < 32; s++) {
            raw.send(open(1 + 2 * s, "SELECT * FROM range(100000000)", 65536, 0));
          }
          for (int s = 0; s < 32; s++) {
            assertThat(raw.receive()).isInstanceOf(Message.Opened.class);
          }
        }
        awaitNoStreamThreads("engine threads busy with unread streams");
        // No batch memory (each open result's Arrow stream handle, 64 bytes, lies in its import's allocator).
        assertThat(server.memoryUse().allocatedBytes()).as("memory of 64 unread streams")
            .isLessThanOrEqualTo(64L * 64);
        try (RawControlConnection one = authenticated(server, "ipc")) {
          one.send(open(1, "SELECT 1", 16, 1));
          assertThat(one.receive()).isInstanceOfSatisfying(Message.Error.class, e -> {
            assertThat(e.code()).isEqualTo(StatusCode.RESOURCE_EXHAUSTED);
            assertThat(e.message()).contains("maximum of 64 streams");
          });
        }
      } finally {
        for (RawControlConnection raw : greedy) {
          raw.close();
        }
      }
      // Each open result keeps its Arrow stream handle in its import's allocator, under the root (outside the
      // server's budget) until it closes: the root back at zero means every stream has ended.
      Memory.awaitZero(allocator::getAllocatedMemory, "server memory and the results' imports");
      assertHonestClientServed(server, "ipc");
    }
  }

  /**
   * Waits up to 20 s for every engine thread to be idle, then asserts they are: a thread that a stream keeps (one
   * waiting for credits, or scanning for a client that left) never comes back to the pool.
   */
  private static void awaitNoStreamThreads(String what) throws InterruptedException {
    io.thallus.testing.Eventually.await(what, java.time.Duration.ofSeconds(20), () -> serverStreamThreads() == 0);
  }

  /** Threads of the server's engine pool that are running a step now (parked streams hold none). */
  private static long serverStreamThreads() {
    return Thread.getAllStackTraces().entrySet().stream()
        .filter(e -> e.getKey().getName().startsWith("thallus-server-stream-"))
        .filter(e -> !isIdlePoolThread(e.getValue()))
        .count();
  }

  private static boolean isIdlePoolThread(StackTraceElement[] stack) {
    for (StackTraceElement frame : stack) {
      if (frame.getMethodName().equals("getTask")) {
        return true;
      }
    }
    return false;
  }

  /** Attack 8: over-size SQL gets a clear INVALID_ARGUMENT from the client, never a lost connection. */
  @Test
  void overSizeSqlIsRefusedByNameNotAsADeadServer() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = server(allocator).build().start();
         BufferAllocator memory = new RootAllocator();
         ThallusClient client = ThallusClient.connect(memory, server.getLocation(), honest())) {
      String huge = "SELECT 1 AS " + "x".repeat(10 << 20);
      for (int i = 0; i < 5; i++) {
        assertThatThrownBy(() -> client.query(QueryRequest.of(huge)))
            .isInstanceOfSatisfying(ThallusException.class,
                e -> assertThat(e.code()).isEqualTo(StatusCode.INVALID_ARGUMENT))
            .hasMessageContaining("over the server's limit of " + (1 << 20) + " bytes");
      }
      try (ThallusStream stream = client.query(QueryRequest.of(HONEST_SQL)); VectorSchemaRoot root = stream.next()) {
        assertThat(((Number) root.getVector(0).getObject(0)).longValue()).isEqualTo(duckdb(HONEST_SQL));
      }
    }
  }

  /** Attack 8, server side: a client that sends an over-size frame anyway reads the server's reason every time. */
  @Test
  void anOverSizeFrameStillGetsItsErrorRead() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = server(allocator).build().start()) {
      byte[] body = new byte[10 << 20];
      for (int i = 0; i < 5; i++) {
        try (RawControlConnection raw = authenticated(server, "ipc")) {
          ByteBuffer frame = ByteBuffer.allocate(5 + body.length).putInt(1 + body.length)
              .put((byte) MessageType.OPEN.wireValue()).put(body);
          try {
            raw.sendBytes(frame.array());
          } catch (IOException cutOff) {
            // The server may stop reading after a few seconds; the error must still be readable.
          }
          assertThat(raw.receive()).isInstanceOfSatisfying(Message.Error.class, e -> {
            assertThat(e.code()).isEqualTo(StatusCode.PROTOCOL_ERROR);
            assertThat(e.message()).contains("over the maximum of " + Protocol.DEFAULT_SERVER_MAX_FRAME);
          });
        }
      }
      assertHonestClientServed(server, "ipc");
    }
  }

  /** Attack 9: stream id 0 is refused; END comes without a spare credit. */
  @Test
  void streamIdZeroIsRefusedAndEndNeedsNoCredit() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = server(allocator).build().start()) {
      try (RawControlConnection raw = authenticated(server, "ipc")) {
        raw.send(open(0, "SELECT 42", 16, 1));
        assertThat(raw.receive()).isInstanceOfSatisfying(Message.Error.class, e -> {
          assertThat(e.streamId()).isZero();
          assertThat(e.code()).isEqualTo(StatusCode.PROTOCOL_ERROR);
          assertThat(e.message()).contains("stream ids start at 1");
        });
        assertThat(raw.closedByServer()).isTrue();
      }
      try (RawControlConnection raw = authenticated(server, "ipc")) {
        raw.send(open(1, "SELECT 42", 16, 1));
        assertThat(raw.receive()).isInstanceOf(Message.Opened.class);
        assertThat(raw.receive()).isInstanceOf(Message.Batch.class);
        assertThat(raw.receive()).as("END after the only batch, with no credit left")
            .isInstanceOfSatisfying(Message.End.class, end -> {
              assertThat(end.rows()).isEqualTo(1);
              assertThat(end.batches()).isEqualTo(1);
            });
      }
      assertHonestClientServed(server, "ipc");
    }
  }

  /**
   * Attack 6: a client that leaves while its rows stream stops DuckDB's work at once. The query below fills its
   * first batches quickly, then scans two billion rows for the one that remains; without the stop, an engine
   * thread would go on scanning for a minute after the client has gone.
   */
  @Test
  void aClientThatLeavesStopsItsStreamingQuery() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = server(allocator).engineThreads(4).build().start()) {
      try (BufferAllocator memory = new RootAllocator()) {
        ThallusClient leaving = ThallusClient.connect(memory, server.getLocation().withTransport("tcp"), honest());
        ThallusStream stream = leaving.query(QueryRequest.builder(
            "SELECT i FROM range(20000000000) t(i) WHERE i < 300000 OR i = 19999999999").batchRows(65536).build());
        try (VectorSchemaRoot first = stream.next()) {
          assertThat(first.getRowCount()).isEqualTo(65536);
        }
        leaving.close();
      }
      awaitNoStreamThreads("engine threads still at work for a client that left");
      Memory.awaitZero(() -> server.memoryUse().allocatedBytes(), "server memory after the client left");
      assertHonestClientServed(server, "tcp");
    }
  }

  /**
   * Attack 7: a query that fails on its own is run once more, on an empty database of the engine's own, to learn
   * DuckDB's message; that second run obeys the query's deadline. The query fails at once where a table of the
   * server's exists and scans a trillion rows where it does not (the diagnostic database), so with a deadline of a
   * few seconds the answer is DEADLINE_EXCEEDED, on a fast machine or a loaded one, and not the end of that scan.
   */
  @Test
  void theRunThatRecoversAnErrorMessageObeysTheDeadline() throws Exception {
    String sql = "SELECT sum(CASE WHEN s.n > 0 THEN error('late failure') ELSE r.i % 7 END) AS v "
        + "FROM (SELECT count(*) AS n FROM duckdb_tables() WHERE table_name = 'hardening_switch') s, "
        + "range(1000000000000) r(i)";
    Duration timeout = Duration.ofSeconds(3);
    // One engine thread: a diagnostic run that outlived the deadline would keep the honest client below from running.
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = server(allocator).engineThreads(1).build().start();
         BufferAllocator memory = new RootAllocator();
         ThallusClient client = ThallusClient.connect(memory, server.getLocation(), honest())) {
      client.query("CREATE TABLE hardening_switch (x INTEGER)").close();
      long start = System.nanoTime();
      assertThatThrownBy(() -> {
        try (ThallusStream stream = client.query(QueryRequest.builder(sql).timeout(timeout).build())) {
          stream.next();
        }
      }).isInstanceOfSatisfying(ThallusException.class,
          e -> assertThat(e.code()).as(e.getMessage()).isEqualTo(StatusCode.DEADLINE_EXCEEDED));
      // The diagnostic run alone would take minutes: an answer within a minute came from the deadline.
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMinutes(1));
      assertHonestClientServed(server, "tcp");
    }
  }

  /**
   * The tcp data socket: a token seen on the wire, presented from another address (127.0.0.2 here), does not
   * take the client's batches; the client's own connection, from its control connection's address, still does,
   * and a token is accepted once only.
   */
  @Test
  void aRacedDataTokenFromAnotherAddressIsRefused() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = server(allocator).build().start();
         RawControlConnection victim = new RawControlConnection(server.getLocation())) {
      victim.send(hello("tcp"));
      Message.Welcome welcome = (Message.Welcome) victim.receive();
      int dataPort = Integer.parseInt(welcome.parameters().get("tcp.port"));
      byte[] token = java.util.HexFormat.of().parseHex(welcome.parameters().get("tcp.token"));
      try (Socket racer = new Socket()) {
        racer.bind(new java.net.InetSocketAddress("127.0.0.2", 0));
        racer.connect(new java.net.InetSocketAddress("127.0.0.1", dataPort));
        racer.getOutputStream().write(token);
        assertThat(closedWithin(racer, Duration.ofSeconds(3))).as("the racer from another address").isTrue();
      }
      try (Socket own = new Socket("127.0.0.1", dataPort);
           Socket second = new Socket("127.0.0.1", dataPort)) {
        own.getOutputStream().write(token);
        assertThat(closedWithin(own, Duration.ofMillis(500))).as("the client's own data connection").isFalse();
        second.getOutputStream().write(token);
        assertThat(closedWithin(second, Duration.ofSeconds(3))).as("the same token a second time").isTrue();
      }
    }
  }
}
