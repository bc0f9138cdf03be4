package io.thallus.e2e;

import static io.thallus.testing.Memory.awaitAtMost;
import static io.thallus.testing.Memory.awaitZero;
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
import io.thallus.testing.ChildJvm;
import io.thallus.testing.HoldingClientMain;
import io.thallus.testing.ServerMain;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** What same-host transports must survive: peers killed mid-stream, hoarding consumers, other users. */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
public class SameHostTest {
  private static final Path SHM = Path.of("/dev/shm");

  public static List<Path> segmentFolders(long serverPid) throws IOException {
    try (Stream<Path> folders = Files.list(SHM)) {
      return folders.filter(f -> f.getFileName().toString().startsWith("thallus-" + serverPid + "-")).toList();
    }
  }

  private static long segmentFolderCount(long serverPid) {
    try {
      return segmentFolders(serverPid).size();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"shm", "cma"})
  void aClientKilledWhileHoldingBatchesLeavesNothingOnTheServer(String transport) throws Exception {
    clientKilledWhileHoldingBatches(transport);
  }

  @ParameterizedTest
  @ValueSource(strings = {"shm", "cma"})
  void aServerKilledMidStreamGivesTheClientAnErrorAndLeavesItsBatchesReadable(String transport) throws Exception {
    serverKilledMidStream(transport);
  }

  /** A client process holding batches is killed: the server frees everything and goes on serving. */
  static void clientKilledWhileHoldingBatches(String transport) throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create())
             .build().start()) {
      try (ChildJvm client = ChildJvm.start(HoldingClientMain.class,
          server.getLocation().withTransport(transport).toString(), "8")) {
        assertThat(client.awaitLine("HOLDING", 60)).isEqualTo("HOLDING 8 over " + transport);
        assertThat(server.memoryUse().allocatedBytes()).isPositive();
        client.kill();
      }
      awaitZero(() -> server.memoryUse().allocatedBytes(), "server memory after the client was killed");
      // The folder goes when the connection's close has run, which may be a moment after its memory was freed.
      awaitZero(() -> segmentFolderCount(ProcessHandle.current().pid()), "segment folders after the client was killed");
      try (ThallusClient client = ThallusClient.connect(allocator, server.getLocation().withTransport(transport));
           ThallusStream stream = client.query("SELECT 5 AS still_serving")) {
        try (VectorSchemaRoot root = stream.next()) {
          assertThat(root.getVector(0).getObject(0)).isEqualTo(5);
        }
      }
    }
  }

  /** The server process dies mid-stream: the client gets an error in time and keeps readable batches. */
  public static void serverKilledMidStream(String transport) throws Exception {
    try (ChildJvm serverProcess = ChildJvm.start(ServerMain.class);
         BufferAllocator allocator = new RootAllocator()) {
      int port = Integer.parseInt(serverProcess.awaitLine("LISTENING", 60).split(" ")[1]);
      ClientOptions options = ClientOptions.builder().timeout(Duration.ofSeconds(20)).build();
      try (ThallusClient client = ThallusClient.connect(allocator, Location.of("127.0.0.1", port, transport), options);
           ThallusStream stream = client.query(QueryRequest.builder("SELECT i FROM range(1000000000) t(i)")
               .batchRows(65536).build())) {
        try (VectorSchemaRoot kept = stream.next()) {
          serverProcess.kill();
          long start = System.nanoTime();
          assertThatThrownBy(() -> {
            while (stream.hasNext()) {
              stream.next().close();
            }
          }).isInstanceOfSatisfying(ThallusException.class,
              e -> assertThat(e.code()).isIn(StatusCode.UNAVAILABLE, StatusCode.CANCELLED));
          assertThat(System.nanoTime() - start).isLessThan(TimeUnit.SECONDS.toNanos(20));
          // The batch kept from before the crash is still whole: no SIGBUS, no garbage.
          BigIntVector values = (BigIntVector) kept.getVector(0);
          for (int row = 0; row < kept.getRowCount(); row++) {
            assertThat(values.get(row)).isEqualTo(row);
          }
        }
      }
      assertThat(segmentFolders(serverProcess.pid())).as("segments of the dead server").isEmpty();
    }
  }

  @Test
  void aClientThatKeepsEveryBatchIsStoppedByTheSharedMemoryBudget() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create())
             .memoryPerClient(4 << 20).ioTimeout(Duration.ofSeconds(2)).build().start();
         ThallusClient client = ThallusClient.connect(allocator, server.getLocation().withTransport("shm"))) {
      List<VectorSchemaRoot> kept = new ArrayList<>();
      try (ThallusStream stream = client.query(QueryRequest.builder("SELECT i FROM range(1024000) t(i)")
          .batchRows(8192).build())) {
        assertThatThrownBy(() -> {
          while (stream.hasNext()) {
            kept.add(stream.next());
          }
        }).isInstanceOfSatisfying(ThallusException.class, e -> {
          assertThat(e.code()).isEqualTo(StatusCode.RESOURCE_EXHAUSTED);
          assertThat(e.getMessage()).contains("has not released, and the limit per client is " + (4 << 20));
        });
        // Every batch received before the budget ran out is intact; the server never went past the budget.
        assertThat(kept.size()).isBetween(10, 124);
        for (int b = 0; b < kept.size(); b++) {
          assertThat(((BigIntVector) kept.get(b).getVector(0)).get(8191)).isEqualTo(b * 8192L + 8191);
        }
        // The stream thread may still hold DuckDB's last batch (engine memory, not shared memory) for a moment.
        awaitAtMost(() -> server.memoryUse().allocatedBytes(), 4 << 20, "server memory after the error");
      } finally {
        kept.forEach(VectorSchemaRoot::close);
      }
    }
  }

  @Test
  void aClientThatKeepsEveryBatchIsStoppedByItsReceivePool() {
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create())
             .build().start();
         ThallusClient client = ThallusClient.connect(allocator, server.getLocation().withTransport("cma"),
             ClientOptions.builder().receivePoolBytes(4 << 20).build())) {
      List<VectorSchemaRoot> kept = new ArrayList<>();
      try (ThallusStream stream = client.query(QueryRequest.builder("SELECT i FROM range(1024000) t(i)")
          .batchRows(8192).build())) {
        assertThatThrownBy(() -> {
          while (stream.hasNext()) {
            kept.add(stream.next());
          }
        }).isInstanceOfSatisfying(ThallusException.class, e -> {
          assertThat(e.code()).isEqualTo(StatusCode.RESOURCE_EXHAUSTED);
          assertThat(e.getMessage()).contains("receive pool is full");
        });
        assertThat(kept.size()).isBetween(10, 124);
        assertThat(client.allocatedBytes()).isLessThanOrEqualTo(8 << 20);
      } finally {
        kept.forEach(VectorSchemaRoot::close);
      }
    }
  }

  @Test
  void sharedMemorySegmentsAreReadableByTheirOwnerOnly() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create())
             .build().start();
         ThallusClient client = ThallusClient.connect(allocator, server.getLocation());
         ThallusStream stream = client.query("SELECT i FROM range(100000) t(i)")) {
      assertThat(client.transport()).isEqualTo("shm");
      stream.next().close();
      List<Path> folders = segmentFolders(ProcessHandle.current().pid());
      assertThat(folders).hasSize(1);
      assertThat(Files.getPosixFilePermissions(folders.getFirst())).containsExactlyInAnyOrder(
          PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_EXECUTE);
      try (Stream<Path> segments = Files.list(folders.getFirst())) {
        List<Path> files = segments.toList();
        assertThat(files).isNotEmpty();
        for (Path file : files) {
          assertThat(Files.getPosixFilePermissions(file))
              .isEqualTo(Set.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE));
        }
      }
    }
  }
}
