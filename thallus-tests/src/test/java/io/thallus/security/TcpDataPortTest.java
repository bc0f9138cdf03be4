package io.thallus.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.thallus.Location;
import io.thallus.ThallusClient;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import io.thallus.ThallusStream;
import io.thallus.e2e.RawControlConnection;
import io.thallus.internal.protocol.Message;
import io.thallus.internal.protocol.Protocol;
import io.thallus.testing.ChildJvm;
import io.thallus.testing.Memory;
import io.thallus.testing.ServerMain;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The tcp transport's data port takes connections from anyone who can reach it; a connection is only tied to a
 * client once it sends its session's token. Connections that never send one must cost the server little and not
 * for long, must not lock out a client whose token is on its way, and running out of file descriptors must not
 * turn the acceptor into a busy loop that floods the log.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class TcpDataPortTest {
  /** The server's defaults: pending (not yet identified) data connections kept, and how long each may stay silent. */
  private static final int PENDING_BOUND = 128;
  private static final Duration HANDSHAKE_TIMEOUT = Duration.ofSeconds(5);
  private static final int FLOOD = 300;
  /** Well within the data port's listen backlog, so each connect completes while the server is not accepting. */
  private static final int BACKLOG_FILL = 30;
  private static final String SQL = "SELECT i FROM range(1000000) t(i)";
  private static final long ROWS = 1_000_000;
  private static final long SUM = ROWS * (ROWS - 1) / 2;

  private BufferAllocator allocator;
  private ThallusServer server;
  private final List<SocketChannel> silent = new ArrayList<>();

  @BeforeEach
  void start() {
    allocator = new RootAllocator();
    server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create())
        .transports(List.of("tcp")).build().start();
  }

  @AfterEach
  void stop() throws InterruptedException {
    closeAll(silent);
    try {
      server.close();
    } finally {
      allocator.close();
    }
  }

  @Test
  void aFloodOfSilentConnectionsKeepsOnlyTheNewestPendingAndAnHonestClientIsServedMeanwhile() throws Exception {
    int port = dataPort(server.getLocation());
    for (int i = 0; i < FLOOD; i++) {
      silent.add(openSilent(port));
    }

    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (closedByServer(silent).size() < FLOOD - PENDING_BOUND && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    List<Integer> closed = closedByServer(silent);
    assertThat(closed).as("silent data connections the server closed, of %d", FLOOD)
        .hasSizeGreaterThanOrEqualTo(FLOOD - PENDING_BOUND);
    assertThat(closed).as("the closed ones are the oldest").isEqualTo(
        Stream.iterate(0, i -> i + 1).limit(closed.size()).toList());

    // The newest silent connections are still pending, and more arrive while the client connects and reads.
    try (BackgroundFlood more = BackgroundFlood.start(port);
         BufferAllocator clientMemory = new RootAllocator();
         ThallusClient client = ThallusClient.connect(clientMemory,
             Location.of("127.0.0.1", server.getLocation().port(), "tcp"));
         ThallusStream stream = client.query(SQL)) {
      assertThat(client.transport()).isEqualTo("tcp");
      assertThat(rowsAndSum(stream)).containsExactly(ROWS, SUM);
      assertThat(more.opened()).as("silent connections opened during the query").isPositive();
    }
    Memory.awaitZero(() -> server.memoryUse().allocatedBytes(), "server memory");
  }

  @Test
  void aSilentConnectionIsClosedWhenTheHandshakeTimeoutPasses() throws Exception {
    int port = dataPort(server.getLocation());
    long opened = System.nanoTime();
    silent.add(openSilent(port));
    long deadline = opened + HANDSHAKE_TIMEOUT.plusSeconds(15).toNanos();
    while (closedByServer(silent).isEmpty() && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    Duration waited = Duration.ofNanos(System.nanoTime() - opened);
    assertThat(closedByServer(silent)).as("closed by the server within %d ms", waited.toMillis()).containsExactly(0);
    // Not before the timeout (less the acceptor's timer slack); how long after it depends on the machine's load,
    // which the wait above bounds generously.
    assertThat(waited).isGreaterThanOrEqualTo(HANDSHAKE_TIMEOUT.minusMillis(500));
  }

  /**
   * A server in its own process, whose descriptor limit is lowered to a few more than it has open, gets silent data
   * connections until accepting fails with EMFILE. While the accept keeps failing the server must neither spin (CPU
   * time) nor log each failure (lines printed).
   */
  @Test
  void runningOutOfDescriptorsNeitherSpinsNorFloodsTheLog() throws Exception {
    Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/bin/prlimit")), "needs prlimit (util-linux)");
    List<SocketChannel> flood = new ArrayList<>();
    try (ChildJvm child = ChildJvm.start(ServerMain.class)) {
      Location location = Location.of("127.0.0.1",
          Integer.parseInt(child.awaitLine("LISTENING ", 60).substring("LISTENING ".length())), "tcp");
      // One whole query first, so the classes serving tcp are loaded before descriptors run out.
      try (BufferAllocator clientMemory = new RootAllocator();
           ThallusClient client = ThallusClient.connect(clientMemory, location);
           ThallusStream stream = client.query(SQL)) {
        assertThat(rowsAndSum(stream)).containsExactly(ROWS, SUM);
      }
      int port = dataPort(location);
      long open;
      try (Stream<Path> fds = Files.list(Path.of("/proc", Long.toString(child.pid()), "fd"))) {
        open = fds.count();
      }
      long limit = open + 40;
      Process prlimit = new ProcessBuilder("/usr/bin/prlimit", "--pid", Long.toString(child.pid()),
          "--nofile=" + limit + ":" + limit).inheritIO().start();
      assertThat(prlimit.waitFor(10, TimeUnit.SECONDS) && prlimit.exitValue() == 0).as("prlimit ran").isTrue();
      child.takeLines();

      boolean exhausted = false;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (!exhausted && flood.size() < 2 * PENDING_BOUND && System.nanoTime() < deadline) {
        try {
          flood.add(openSilent(port));
        } catch (IOException e) {
          break; // the listen backlog is full: the server stopped accepting, which is what comes next
        }
        Thread.sleep(2);
        exhausted = child.takeLines().stream().anyMatch(line -> line.contains("Too many open files"));
      }
      while (!exhausted && System.nanoTime() < deadline) {
        exhausted = child.takeLines().stream().anyMatch(line -> line.contains("Too many open files"));
        Thread.sleep(20);
      }
      assertThat(exhausted).as("the server reported running out of descriptors after %d connections", flood.size())
          .isTrue();
      // Connections waiting in the listen backlog keep the listener ready while accepting them fails.
      for (int i = 0; i < BACKLOG_FILL; i++) {
        try {
          flood.add(openSilent(port));
        } catch (IOException e) {
          break;
        }
      }
      child.takeLines();

      // Rates over a window of about 3 s: the bounds follow the window as measured, which a loaded machine stretches.
      ProcessHandle process = ProcessHandle.of(child.pid()).orElseThrow();
      Duration cpuBefore = process.info().totalCpuDuration().orElseThrow();
      long windowStart = System.nanoTime();
      Thread.sleep(3_000);
      Duration cpu = process.info().totalCpuDuration().orElseThrow().minus(cpuBefore);
      List<String> logged = child.takeLines().stream().filter(line -> line.contains("tcp data")).toList();
      Duration window = Duration.ofNanos(System.nanoTime() - windowStart);
      SoftAssertions.assertSoftly(softly -> {
        // At most one line a second, and one more for the second the window began in.
        softly.assertThat(logged.size()).as("tcp data port lines logged in %d ms: %s", window.toMillis(),
            logged.stream().limit(3).toList()).isLessThanOrEqualTo((int) Math.ceil(window.toMillis() / 1000.0) + 1);
        // A spinning accept loop uses a whole core; backing off, a small fraction of one.
        softly.assertThat(cpu).as("CPU time the server used in %d ms of failing accepts", window.toMillis())
            .isLessThan(window.dividedBy(3));
      });
    } finally {
      closeAll(flood);
    }
  }

  /** The tcp data port, from the WELCOME a bare control connection gets when it asks for tcp. */
  static int dataPort(Location control) throws IOException {
    try (RawControlConnection raw = new RawControlConnection(control)) {
      raw.send(new Message.Hello(Protocol.VERSION, "data port probe", List.of("tcp"), Map.of(), Map.of()));
      Message reply = raw.receive();
      assertThat(reply).isInstanceOf(Message.Welcome.class);
      return Integer.parseInt(((Message.Welcome) reply).parameters().get("tcp.port"));
    }
  }

  /** A connection to the data port that never sends anything; non-blocking, so the test can poll it for EOF. */
  static SocketChannel openSilent(int port) throws IOException {
    SocketChannel channel = SocketChannel.open();
    try {
      channel.socket().connect(new InetSocketAddress("127.0.0.1", port), 2_000);
      channel.configureBlocking(false);
      return channel;
    } catch (IOException e) {
      channel.close();
      throw e;
    }
  }

  /** The indexes of the connections the server has closed (end of stream, or reset). */
  private static List<Integer> closedByServer(List<SocketChannel> channels) {
    List<Integer> closed = new ArrayList<>();
    ByteBuffer one = ByteBuffer.allocate(1);
    for (int i = 0; i < channels.size(); i++) {
      try {
        one.clear();
        if (channels.get(i).read(one) < 0) {
          closed.add(i);
        }
      } catch (IOException e) {
        closed.add(i);
      }
    }
    return closed;
  }

  private static long[] rowsAndSum(ThallusStream stream) {
    long rows = 0;
    long sum = 0;
    while (stream.hasNext()) {
      try (VectorSchemaRoot root = stream.next()) {
        BigIntVector values = (BigIntVector) root.getVector(0);
        for (int i = 0; i < root.getRowCount(); i++) {
          sum += values.get(i);
        }
        rows += root.getRowCount();
      }
    }
    return new long[] {rows, sum};
  }

  private static void closeAll(List<SocketChannel> channels) {
    for (SocketChannel channel : channels) {
      try {
        channel.close();
      } catch (IOException ignored) {
        // Closing is all the test wants of it.
      }
    }
    channels.clear();
  }

  /** Opens silent connections back to back, on a thread of its own, until closed (at most 2,000, for 30 s). */
  private static final class BackgroundFlood implements AutoCloseable {
    private static final int MAX = 2_000;
    private final List<SocketChannel> channels = new ArrayList<>();
    private final Thread thread;
    private volatile boolean stopped;
    private volatile int opened;

    private BackgroundFlood(int port) {
      thread = Thread.ofPlatform().daemon().name("background-flood").start(() -> {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!stopped && opened < MAX && System.nanoTime() < deadline) {
          try {
            channels.add(openSilent(port));
            opened++;
          } catch (IOException e) {
            return;
          }
        }
      });
    }

    static BackgroundFlood start(int port) {
      return new BackgroundFlood(port);
    }

    int opened() {
      return opened;
    }

    @Override
    public void close() {
      stopped = true;
      try {
        thread.join(TimeUnit.SECONDS.toMillis(10));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      closeAll(channels);
    }
  }
}
