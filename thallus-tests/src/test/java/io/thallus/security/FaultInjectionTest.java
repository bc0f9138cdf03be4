package io.thallus.security;

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
import io.thallus.e2e.SameHostTest;
import io.thallus.testing.ChildJvm;
import io.thallus.testing.Memory;
import io.thallus.testing.StreamingClientMain;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Faults injected for real: client processes killed with SIGKILL at random moments, a server process killed, a
 * connection reset in the middle of a batch, and many clients at once within a memory budget. The kill count is
 * 12 in the test suite; {@code -Dthallus.faults.kills=100} runs the long version (README, "Failure behaviour").
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class FaultInjectionTest {
  private static final int KILLS = Integer.getInteger("thallus.faults.kills", 12);
  private static final List<String> TRANSPORTS = List.of("tcp", "ipc", "shm", "cma");

  @Test
  void clientsKilledAtRandomMomentsLeaveTheServerAsItWas() throws Exception {
    Random random = new Random(Long.getLong("thallus.faults.seed", 7));
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create())
             .build().start()) {
      int parallel = 4;
      for (int round = 0; round < KILLS; round += parallel) {
        List<ChildJvm> clients = new ArrayList<>();
        try {
          for (int i = round; i < Math.min(KILLS, round + parallel); i++) {
            String transport = TRANSPORTS.get(i % TRANSPORTS.size());
            clients.add(ChildJvm.start(StreamingClientMain.class,
                server.getLocation().withTransport(transport).toString()));
          }
          for (ChildJvm client : clients) {
            client.awaitLine("STREAMING", 60);
          }
          for (ChildJvm client : clients) {
            // A random moment: mid-batch, between batches, while the server waits for credit.
            Thread.sleep(random.nextInt(300));
            client.kill();
          }
        } finally {
          for (ChildJvm client : clients) {
            client.close();
          }
        }
      }
      Memory.awaitZero(() -> server.memoryUse().allocatedBytes(), "server memory after " + KILLS + " kills");
      assertThat(SameHostTest.segmentFolders(ProcessHandle.current().pid())).as("shared memory left").isEmpty();
      for (String transport : TRANSPORTS) {
        try (ThallusClient client = ThallusClient.connect(allocator, server.getLocation().withTransport(transport))) {
          assertThat(sum(client, 100_000)).as("still serving over " + transport).isEqualTo(99_999L * 100_000 / 2);
        }
      }
      Memory.awaitZero(() -> server.memoryUse().allocatedBytes(), "server memory at the end");
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"tcp", "ipc"})
  void aServerKilledMidStreamGivesTheClientAnErrorInTime(String transport) throws Exception {
    SameHostTest.serverKilledMidStream(transport);
  }

  @Test
  void aConnectionResetMidBatchIsAnErrorForTheClientAndFreesTheServer() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create())
             .build().start();
         CuttingProxy proxy = new CuttingProxy(server.getLocation().port(), 3 << 20)) {
      // ipc: the bodies ride the control connection, so the cut lands inside a batch.
      ClientOptions options = ClientOptions.builder().timeout(Duration.ofSeconds(20)).build();
      try (ThallusClient client = ThallusClient.connect(allocator, Location.of("127.0.0.1", proxy.port(), "ipc"),
          options);
           ThallusStream stream = client.query(QueryRequest.builder("SELECT i FROM range(100000000) t(i)")
               .batchRows(65536).build())) {
        long start = System.nanoTime();
        assertThatThrownBy(() -> {
          while (stream.hasNext()) {
            stream.next().close();
          }
        }).isInstanceOfSatisfying(ThallusException.class,
            e -> assertThat(e.code()).isIn(StatusCode.UNAVAILABLE, StatusCode.PROTOCOL_ERROR));
        assertThat(System.nanoTime() - start).isLessThan(TimeUnit.SECONDS.toNanos(20));
        assertThat(proxy.bytesForwarded()).isGreaterThanOrEqualTo(3 << 20);
      }
      Memory.awaitZero(() -> server.memoryUse().allocatedBytes(), "server memory after the reset");
      try (ThallusClient client = ThallusClient.connect(allocator, server.getLocation())) {
        assertThat(sum(client, 1000)).isEqualTo(999L * 1000 / 2);
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"tcp", "ipc", "shm", "cma"})
  void aServerShutDownWithStreamsOpenEndsThemAndFreesEverything(String transport) throws Exception {
    try (BufferAllocator clientMemory = new RootAllocator()) {
      BufferAllocator serverMemory = new RootAllocator();
      ThallusServer server = ThallusServer.builder(serverMemory, Location.of("127.0.0.1", 0), DuckDBEngine.create())
          .shutdownTimeout(Duration.ofSeconds(10)).build().start();
      ClientOptions options = ClientOptions.builder().timeout(Duration.ofSeconds(20)).build();
      try (ThallusClient client = ThallusClient.connect(clientMemory, server.getLocation().withTransport(transport),
          options);
           ThallusStream stream = client.query(QueryRequest.builder("SELECT i FROM range(100000000000) t(i)")
               .batchRows(65536).build())) {
        stream.next().close();
        // Closing fails if any server memory is still held: streams, batches, shared memory.
        server.close();
        serverMemory.close();
        assertThatThrownBy(() -> {
          while (stream.hasNext()) {
            stream.next().close();
          }
        }).isInstanceOfSatisfying(ThallusException.class,
            e -> assertThat(e.code()).isIn(StatusCode.UNAVAILABLE, StatusCode.CANCELLED));
      }
    }
  }

  @Test
  void thirtyTwoClientsPullLargeResultsWithinAMemoryBudget() throws Exception {
    long budget = 512L << 20;
    int clients = 32;
    long rows = 2_000_000;
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create())
             .memoryLimit(budget).build().start()) {
      ExecutorService pool = Executors.newFixedThreadPool(clients);
      try {
        List<Future<Long>> sums = new ArrayList<>();
        for (int i = 0; i < clients; i++) {
          String transport = TRANSPORTS.get(i % TRANSPORTS.size());
          sums.add(pool.submit(() -> {
            try (ThallusClient client = ThallusClient.connect(allocator,
                server.getLocation().withTransport(transport))) {
              return sum(client, rows);
            }
          }));
        }
        for (Future<Long> sum : sums) {
          assertThat(sum.get(8, TimeUnit.MINUTES)).isEqualTo((rows - 1) * rows / 2);
        }
      } finally {
        pool.shutdownNow();
      }
      long peak = server.memoryUse().peakBytes();
      System.out.printf("32 clients x %,d rows: server peak %,d bytes of a %,d budget%n", rows, peak, budget);
      assertThat(peak).isLessThanOrEqualTo(budget);
      Memory.awaitZero(() -> server.memoryUse().allocatedBytes(), "server memory after 32 clients");
    }
  }

  private static long sum(ThallusClient client, long rows) {
    long sum = 0;
    try (ThallusStream stream = client.query(QueryRequest.builder("SELECT i FROM range(" + rows + ") t(i)")
        .batchRows(65536).build())) {
      while (stream.hasNext()) {
        try (VectorSchemaRoot batch = stream.next()) {
          BigIntVector values = (BigIntVector) batch.getVector(0);
          for (int i = 0; i < batch.getRowCount(); i++) {
            sum += values.get(i);
          }
        }
      }
    }
    return sum;
  }

  /** Forwards one connection to the server, then resets both sides (RST, not FIN) after {@code cutAfter} bytes. */
  private static final class CuttingProxy implements AutoCloseable {
    private final ServerSocket listener;
    private final AtomicLong forwarded = new AtomicLong();
    private final Thread acceptor;

    CuttingProxy(int serverPort, long cutAfter) throws IOException {
      listener = new ServerSocket();
      listener.bind(new InetSocketAddress("127.0.0.1", 0));
      acceptor = Thread.ofPlatform().daemon().name("cutting-proxy").start(() -> {
        try (Socket client = listener.accept();
             Socket server = new Socket("127.0.0.1", serverPort)) {
          Thread upstream = Thread.ofPlatform().daemon().start(() -> copy(client, server, Long.MAX_VALUE));
          copy(server, client, cutAfter);
          client.setSoLinger(true, 0);
          server.setSoLinger(true, 0);
          upstream.interrupt();
        } catch (IOException ignored) {
          // The test is over or the proxy was closed.
        }
      });
    }

    private void copy(Socket from, Socket to, long limit) {
      byte[] buffer = new byte[16384];
      try {
        InputStream in = from.getInputStream();
        OutputStream out = to.getOutputStream();
        long sent = 0;
        int n;
        while (sent < limit && (n = in.read(buffer, 0, (int) Math.min(buffer.length, limit - sent))) > 0) {
          out.write(buffer, 0, n);
          sent += n;
          forwarded.addAndGet(n);
        }
      } catch (IOException ignored) {
        // A reset on either side ends this direction.
      }
    }

    int port() {
      return listener.getLocalPort();
    }

    long bytesForwarded() {
      return forwarded.get();
    }

    @Override
    public void close() throws Exception {
      listener.close();
      acceptor.join(10_000);
    }
  }
}
