package io.thallus.internal.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.embedded.EmbeddedChannel;
import io.thallus.StatusCode;
import io.thallus.engine.QueryEngine;
import io.thallus.engine.QueryResult;
import io.thallus.engine.QuerySpec;
import io.thallus.internal.Transports;
import io.thallus.internal.protocol.Message;
import io.thallus.internal.protocol.Protocol;
import io.thallus.server.Admission;
import io.thallus.server.Authentication;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.ServerTransport;
import io.thallus.spi.Transport;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The server's connection handlers without a socket: the handshake (a bad HELLO is answered and the connection
 * closed; WELCOME puts the connection's handler in the handshake's place) and the checks of OPEN and INGEST (a stream
 * id in use, the client's limit of open streams, a server shutting down). A real ipc transport answers the HELLO.
 * Queries are never run: the engine threads here only queue their steps, so an opened stream stays open, holding its
 * id; they run at the end, to wind the streams down and free the connection's memory.
 */
class ConnectionHandlersTest {
  private static final int STREAMS_PER_CLIENT = 2;

  private BufferAllocator allocator;
  private ServerTransport ipc;
  private ScheduledExecutorService timers;
  private ExecutorService engineThreads;
  private final List<Runnable> heldSteps = new ArrayList<>();
  private StreamRegistry registry;
  private ServerContext context;
  private EmbeddedChannel channel;

  @BeforeEach
  void setUp() throws Exception {
    allocator = new RootAllocator(256L << 20);
    Transport transport = Transports.byName("ipc");
    Duration ioTimeout = Duration.ofSeconds(5);
    ipc = transport.startServer(new ServerTransport.Context(allocator, new InetSocketAddress("127.0.0.1", 0),
        ioTimeout, 32L << 20, ServerTransport.Context.DEFAULT_HANDSHAKE_TIMEOUT));
    timers = Executors.newSingleThreadScheduledExecutor();
    engineThreads = Executors.newSingleThreadExecutor();
    registry = new StreamRegistry(Admission.defaults(), heldSteps::add);
    ServerContext.Limits limits = new ServerContext.Limits(10, Admission.defaults(), Protocol.HELLO_MAX_FRAME,
        1 << 20, Duration.ofMinutes(5), 100, STREAMS_PER_CLIENT, 16, 64, 2, 1 << 16, 32L << 20);
    context = new ServerContext("test", allocator, new UnusedEngine(), Optional.empty(),
        List.of(new ServerContext.Started(transport, ipc)), engineThreads, timers, ioTimeout,
        Duration.ofMinutes(5), 1 << 16, new CredentialBudgets(allocator, 64L << 20), Authentication.none(), limits,
        false, new ServerMetrics(new SimpleMeterRegistry(), registry, allocator),
        ProducerPool.of(io.thallus.server.Overlap.off(), 1, 1, () -> 0));
    channel = new EmbeddedChannel(false, false) {
      @Override
      protected SocketAddress remoteAddress0() {
        return new InetSocketAddress("127.0.0.1", 40_000);
      }
    };
    channel.pipeline().addLast("connection", new HandshakeHandler(context, registry));
    channel.register();
  }

  @AfterEach
  void tearDown() throws Exception {
    channel.close();
    // The streams, aborted by the disconnect, wind down on their next step; the last one closes the connection.
    while (!heldSteps.isEmpty()) {
      heldSteps.removeFirst().run();
    }
    channel.runPendingTasks();
    channel.finishAndReleaseAll();
    ipc.close();
    timers.shutdownNow();
    engineThreads.shutdownNow();
    allocator.close();
  }

  @Test
  void aHelloOfAnotherProtocolVersionIsAnsweredAndTheConnectionClosed() {
    channel.writeInbound(new Message.Hello(Protocol.VERSION + 1, "test", List.of("ipc"), Map.of(), Map.of()));
    Message.Error error = channel.readOutbound();
    assertThat(error.streamId()).isZero();
    assertThat(error.code()).isEqualTo(StatusCode.UNIMPLEMENTED);
    assertThat(error.message()).contains("protocol version " + (Protocol.VERSION + 1));
    assertThat(channel.isOpen()).isFalse();
    assertThat(registry.pendingCount()).isZero();
  }

  @Test
  void aRequestBeforeHelloIsAnsweredAndTheConnectionClosed() {
    channel.writeInbound(open(1));
    Message.Error error = channel.readOutbound();
    assertThat(error.code()).isEqualTo(StatusCode.FAILED_PRECONDITION);
    assertThat(error.message()).isEqualTo("expected HELLO first, got OPEN");
    assertThat(channel.isOpen()).isFalse();
  }

  @Test
  void aHelloWithNoTransportInCommonIsAnsweredAndItsMemoryFreed() {
    channel.writeInbound(hello(List.of("carrier-pigeon")));
    Message.Error error = channel.readOutbound();
    assertThat(error.code()).isEqualTo(StatusCode.UNIMPLEMENTED);
    assertThat(error.message()).startsWith("no transport in common");
    assertThat(channel.isOpen()).isFalse();
    assertThat(allocator.getChildAllocators()).as("the budgets' allocators only").allSatisfy(
        budget -> assertThat(budget.getChildAllocators()).isEmpty());
  }

  @Test
  void aSecondHelloAfterARefusedOneIsDropped() {
    channel.writeInbound(hello(List.of("carrier-pigeon")), hello(List.of("ipc")));
    Message.Error error = channel.readOutbound();
    assertThat(error.code()).isEqualTo(StatusCode.UNIMPLEMENTED);
    assertThat((Object) channel.readOutbound()).as("no WELCOME for the second").isNull();
    assertThat(channel.isOpen()).isFalse();
    assertThat(registry.clientCount()).isZero();
  }

  @Test
  void welcomeReplacesTheHandshakeWithTheConnectionsHandler() {
    assertThat(channel.pipeline().get("connection")).isInstanceOf(HandshakeHandler.class);
    assertThat(registry.pendingCount()).isEqualTo(1);

    Message.Welcome welcome = welcome();
    assertThat(welcome.transport()).isEqualTo("ipc");
    assertThat(welcome.parameters()).containsEntry(Protocol.SERVER_MAX_FRAME_BYTES, String.valueOf(1 << 20));
    assertThat(channel.pipeline().get("connection")).isInstanceOf(ServerConnectionHandler.class);
    assertThat(channel.pipeline().get(HandshakeHandler.class)).isNull();
    assertThat(registry.pendingCount()).isZero();
    assertThat(registry.clientCount()).isEqualTo(1);

    channel.writeInbound(hello(List.of("ipc")));
    Message.Error twice = channel.readOutbound();
    assertThat(twice.code()).isEqualTo(StatusCode.PROTOCOL_ERROR);
    assertThat(twice.message()).isEqualTo("HELLO sent twice");
    assertThat(channel.isOpen()).isFalse();
  }

  @Test
  void aStreamIdInUseIsRefusedForOpenAndIngestAlike() {
    welcome();
    channel.writeInbound(open(1));
    assertThat((Object) channel.readOutbound()).as("the query waits for an engine thread").isNull();

    channel.writeInbound(open(1));
    assertError(1, StatusCode.FAILED_PRECONDITION, "stream id 1 is in use");
    channel.writeInbound(ingest(1));
    assertError(1, StatusCode.FAILED_PRECONDITION, "stream id 1 is in use");
    assertThat(channel.isOpen()).as("a refused request leaves the connection open").isTrue();
  }

  @Test
  void theClientsLimitOfOpenStreamsCountsIngestsToo() {
    welcome();
    channel.writeInbound(open(1));
    channel.writeInbound(ingest(2));
    // The ingest's engine step waits too, so it asks for no batch yet.
    assertThat((Object) channel.readOutbound()).isNull();

    channel.writeInbound(open(3));
    assertError(3, StatusCode.RESOURCE_EXHAUSTED, "this client already has " + STREAMS_PER_CLIENT + " streams open");
    channel.writeInbound(ingest(4));
    assertError(4, StatusCode.RESOURCE_EXHAUSTED, "this client already has " + STREAMS_PER_CLIENT + " streams open");

    // A stream the client has closed stops counting while it winds down.
    channel.writeInbound(new Message.Close(1));
    channel.writeInbound(open(5));
    assertThat((Object) channel.readOutbound()).isNull();
  }

  @Test
  void aServerShuttingDownRefusesNewRequests() {
    welcome();
    registry.shutDown();
    channel.writeInbound(open(1));
    assertError(1, StatusCode.UNAVAILABLE, "the server is shutting down");
    channel.writeInbound(ingest(2));
    assertError(2, StatusCode.UNAVAILABLE, "the server is shutting down");
  }

  @Test
  void aBatchBeyondTheCreditsGrantedFailsTheConnection() {
    welcome();
    channel.writeInbound(ingest(1));
    // The engine has not asked for a batch yet, so the server has granted no credit.
    channel.writeInbound(new Message.Batch(new BatchHeader(1, 0, List.of())));
    Message.Error error = channel.readOutbound();
    assertThat(error.streamId()).isZero();
    assertThat(error.code()).isEqualTo(StatusCode.PROTOCOL_ERROR);
    assertThat(error.message()).isEqualTo("ingest 1 received batch 0 beyond the credits the server granted");
    assertThat(channel.isOpen()).isFalse();
  }

  @Test
  void aBatchForNoIngestIsDroppedAndTheConnectionGoesOn() {
    welcome();
    channel.writeInbound(new Message.Batch(new BatchHeader(7, 0, List.of())));
    assertThat((Object) channel.readOutbound()).isNull();
    assertThat(channel.isOpen()).isTrue();
  }

  @Test
  void streamIdZeroFailsTheConnection() {
    welcome();
    channel.writeInbound(open(0));
    Message.Error error = channel.readOutbound();
    assertThat(error.streamId()).isZero();
    assertThat(error.code()).isEqualTo(StatusCode.PROTOCOL_ERROR);
    assertThat(error.message()).contains("stream ids start at 1");
    assertThat(channel.isOpen()).isFalse();
  }

  private Message.Welcome welcome() {
    channel.writeInbound(hello(List.of("ipc")));
    Object answer = channel.readOutbound();
    assertThat(answer).isInstanceOf(Message.Welcome.class);
    return (Message.Welcome) answer;
  }

  private void assertError(int streamId, StatusCode code, String message) {
    Object answer = channel.readOutbound();
    assertThat(answer).isInstanceOf(Message.Error.class);
    Message.Error error = (Message.Error) answer;
    assertThat(error.streamId()).isEqualTo(streamId);
    assertThat(error.code()).isEqualTo(code);
    assertThat(error.message()).contains(message);
  }

  private static Message.Hello hello(List<String> transports) {
    return new Message.Hello(Protocol.VERSION, "test", transports, Map.of(), Map.of());
  }

  private static Message.Open open(int streamId) {
    return new Message.Open(streamId, "SELECT 1", "", 1024, 2, 0, 0, List.of(), Map.of(), new byte[0]);
  }

  private static Message.Ingest ingest(int streamId) {
    Schema schema = new Schema(List.of(Field.nullable("v", new ArrowType.Int(64, true))));
    return new Message.Ingest(streamId, "t", 0, 2, 0, schema.serializeAsMessage(), Map.of());
  }

  /** The engine of a server whose queries never get a thread here: it is never asked anything. */
  private static final class UnusedEngine implements QueryEngine {
    @Override
    public QueryResult execute(QuerySpec spec, BufferAllocator memory) {
      throw new AssertionError("no query runs in these tests");
    }

    @Override
    public void close() {}
  }
}
