package io.thallus.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.thallus.server.Admission;
import io.thallus.server.Authentication;
import io.thallus.ClientOptions;
import io.thallus.Location;
import io.thallus.StatusCode;
import io.thallus.ThallusClient;
import io.thallus.ThallusException;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import io.thallus.ThallusStream;
import io.thallus.testing.Eventually;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The native port's quotas per credential and per address (issue 33, breaks 4 and 8): taken atomically however many
 * race for the last place, and one credential's statements, over all its connections, hold at most their share of
 * the engine's threads while another credential is still served.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class AdmissionTest {
  private static final String TOKEN = "admission-token";
  private static final Duration WAIT = Duration.ofSeconds(60);
  /** Runs for many minutes unless stopped, holding little memory: a statement that occupies its engine thread. */
  private static final String LONG_SQL = "SELECT sum(i) FROM range(1000000000000) t(i)";

  private static ThallusServer.Builder server(BufferAllocator allocator, Admission admission) {
    return ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create())
        .transports(List.of("ipc"))
        .authentication(Authentication.token(TOKEN).or(Authentication.users(Map.of("alice", "wonderland"))))
        .admission(admission);
  }

  @Test
  void oneCredentialsConnectionsStopAtItsQuotaEvenWhenTheyRace() throws Exception {
    int racers = 16;
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = server(allocator, Admission.builder().maxConnectionsPerCredential(5).build())
             .build().start()) {
      ConcurrentLinkedQueue<ThallusClient> connected = new ConcurrentLinkedQueue<>();
      ConcurrentLinkedQueue<ThallusException> refused = new ConcurrentLinkedQueue<>();
      CountDownLatch start = new CountDownLatch(1);
      List<Thread> threads = new ArrayList<>();
      try {
        for (int i = 0; i < racers; i++) {
          threads.add(Thread.ofPlatform().start(() -> {
            try {
              start.await();
              connected.add(ThallusClient.connect(allocator, server.getLocation(),
                  ClientOptions.builder().token(TOKEN).build()));
            } catch (ThallusException e) {
              refused.add(e);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }));
        }
        start.countDown();
        for (Thread thread : threads) {
          thread.join(WAIT.toMillis());
        }
        assertThat(connected).hasSize(5);
        assertThat(refused).hasSize(racers - 5).allSatisfy(e -> {
          assertThat(e.code()).isEqualTo(StatusCode.RESOURCE_EXHAUSTED);
          assertThat(e.getMessage()).contains("this credential (token) already has 5 connections open, its quota "
              + "(maxConnectionsPerCredential)");
        });
        // Another credential has its own quota.
        assertAnswered(server, ClientOptions.builder().user("alice", "wonderland").build());
        // A place given back is a place another connection of the credential takes.
        connected.poll().close();
        Eventually.await("the token's fifth place given back", WAIT, () -> {
          try (ThallusClient again = ThallusClient.connect(allocator, server.getLocation(),
              ClientOptions.builder().token(TOKEN).build())) {
            return true;
          } catch (ThallusException stillFull) {
            return false;
          }
        });
      } finally {
        connected.forEach(ThallusClient::close);
      }
    }
  }

  @Test
  void theConnectionsFromOneAddressStopAtItsQuota() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create())
             .transports(List.of("ipc")).admission(Admission.builder().maxConnectionsPerAddress(3).build())
             .build().start()) {
      List<ThallusClient> clients = new ArrayList<>();
      try {
        for (int i = 0; i < 3; i++) {
          clients.add(ThallusClient.connect(allocator, server.getLocation()));
        }
        assertThatThrownBy(() -> ThallusClient.connect(allocator, server.getLocation()))
            .isInstanceOfSatisfying(ThallusException.class, e -> {
              assertThat(e.code()).isEqualTo(StatusCode.RESOURCE_EXHAUSTED);
              assertThat(e.getMessage()).contains("address 127.0.0.1 already has 3 connections open, its quota "
                  + "(maxConnectionsPerAddress)");
            });
      } finally {
        clients.forEach(ThallusClient::close);
      }
    }
  }

  /**
   * Break 8: four connections of one credential each start a statement; two run (its quota) and two wait their
   * turn holding no thread, rather than being refused: a client's statements all finish, one hog cannot hold more.
   * Another credential is answered meanwhile.
   */
  @Test
  void oneCredentialsStatementsOverSeveralConnectionsRunAtMostItsQuotaAtOnce() throws Exception {
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = server(allocator, Admission.builder().maxStatementsPerCredential(2).build())
             .meterRegistry(meters).shutdownTimeout(Duration.ofSeconds(30)).build().start()) {
      List<ThallusClient> hog = new ArrayList<>();
      List<Thread> statements = new ArrayList<>();
      try {
        for (int i = 0; i < 4; i++) {
          ThallusClient client = ThallusClient.connect(allocator, server.getLocation(),
              ClientOptions.builder().token(TOKEN).build());
          hog.add(client);
          statements.add(Thread.ofPlatform().start(() -> {
            try (ThallusStream stream = client.query(LONG_SQL); VectorSchemaRoot ignored = stream.next()) {
              // Stopped by the client's close below, long before it could finish.
            } catch (ThallusException stopped) {
              // Expected: the connection closed under it.
            }
          }));
        }
        Eventually.await("two of the token's four statements waiting for its turn", WAIT,
            () -> waiting(meters) == 2);
        assertAnswered(server, ClientOptions.builder().user("alice", "wonderland").build());
        assertThat(waiting(meters)).as("still two waiting: the token's two running statements hold its turns")
            .isEqualTo(2);
      } finally {
        hog.forEach(ThallusClient::close);
        for (Thread statement : statements) {
          statement.join(WAIT.toMillis());
        }
      }
      Eventually.await("nothing waiting once the hog has gone", WAIT, () -> waiting(meters) == 0);
    }
  }

  /**
   * A statement cancelled while it waits for its credential's turn leaves the queue and is answered CANCELLED at
   * once, not when a running statement finishes (here: never, within the test); the turns stay with the running
   * statements and the rest of the queue keeps its place (issue 33: unread Flight DoGets queued behind the token's
   * statements kept their calls, and sessions, open until their turn).
   */
  @Test
  void aStatementCancelledWhileQueuedForItsCredentialsTurnIsAnsweredAtOnce() throws Exception {
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = server(allocator, Admission.builder().maxStatementsPerCredential(2).build())
             .meterRegistry(meters).shutdownTimeout(Duration.ofSeconds(30)).build().start()) {
      List<ThallusClient> clients = new ArrayList<>();
      List<Thread> hogs = new ArrayList<>();
      try {
        // Opened first, while the token's turns are free: one credit at a time, so each batch read asks for one more.
        ThallusClient reader = ThallusClient.connect(allocator, server.getLocation(),
            ClientOptions.builder().token(TOKEN).credits(1).build());
        clients.add(reader);
        ThallusStream queued = reader.query(io.thallus.QueryRequest.builder("SELECT i FROM range(100000000) t(i)")
            .batchRows(1024).build());
        Eventually.await("the reader's stream parked with its next batch ready, holding no turn", WAIT,
            () -> meters.find("thallus.credit.stalls").counter() != null
                && meters.find("thallus.credit.stalls").counter().count() >= 1);
        // Three endless statements: two take the token's turns, the third waits for one.
        for (int i = 0; i < 3; i++) {
          ThallusClient hog = ThallusClient.connect(allocator, server.getLocation(),
              ClientOptions.builder().token(TOKEN).build());
          clients.add(hog);
          hogs.add(Thread.ofPlatform().start(() -> {
            try (ThallusStream stream = hog.query(LONG_SQL); VectorSchemaRoot ignored = stream.next()) {
              // Stopped by the client's close below, long before it could finish.
            } catch (ThallusException stopped) {
              // Expected: the connection closed under it.
            }
          }));
        }
        Eventually.await("one of the token's endless statements waiting for its turn", WAIT,
            () -> waiting(meters) == 1);
        // Reading a batch asks for the next: the reader's next step queues behind the endless statements.
        try (VectorSchemaRoot first = queued.next()) {
          assertThat(first.getRowCount()).isEqualTo(1024);
        }
        Eventually.await("the reader's next step waiting for the token's turn", WAIT, () -> waiting(meters) == 2);

        queued.cancel();
        java.util.concurrent.CompletableFuture<Throwable> answer = java.util.concurrent.CompletableFuture
            .supplyAsync(() -> {
              try {
                while (queued.hasNext()) {
                  queued.next().close();
                }
                return null;
              } catch (ThallusException e) {
                return e;
              }
            });
        // The running statements never end by themselves: an answer within the wait came before the reader's turn.
        assertThat(answer.get(WAIT.toSeconds(), TimeUnit.SECONDS))
            .isInstanceOfSatisfying(ThallusException.class, e -> assertThat(e.code()).isEqualTo(StatusCode.CANCELLED));
        queued.close();
        Eventually.await("only the third endless statement still waiting", WAIT, () -> waiting(meters) == 1);
        assertAnswered(server, ClientOptions.builder().user("alice", "wonderland").build());
        assertThat(waiting(meters)).as("the token's two turns still held by its running statements, the third "
            + "still queued: the withdrawn step gave back no turn it did not hold").isEqualTo(1);
      } finally {
        clients.forEach(ThallusClient::close);
        for (Thread hog : hogs) {
          hog.join(WAIT.toMillis());
        }
      }
      Eventually.await("nothing waiting once the clients have gone", WAIT, () -> waiting(meters) == 0);
    }
  }

  private static double waiting(SimpleMeterRegistry meters) {
    Gauge gauge = meters.find("thallus.statements.waiting").gauge();
    assertThat(gauge).as("the thallus.statements.waiting gauge").isNotNull();
    return gauge.value();
  }

  private static void assertAnswered(ThallusServer server, ClientOptions options) {
    try (BufferAllocator memory = new RootAllocator();
         ThallusClient client = ThallusClient.connect(memory, server.getLocation(), options);
         ThallusStream stream = client.query("SELECT 42 AS answer");
         VectorSchemaRoot root = stream.next()) {
      assertThat(root.getVector(0).getObject(0)).isEqualTo(42);
    }
  }

  @Test
  void oneCredentialsConnectionsTogetherHoldAtMostItsMemoryWhileAnotherIsServed() throws Exception {
    long perCredential = 24 << 20;
    try (BufferAllocator allocator = new RootAllocator();
         // Over cma the client reads each batch out of the server's own buffers, which the server holds until the
         // client has read it (over ipc a written batch is the client's), so streams never read hold server memory.
         ThallusServer server = server(allocator, Admission.builder().maxMemoryPerCredential(perCredential).build())
             .transports(List.of("cma")).memoryLimit(64 << 20).memoryPerClient(32 << 20).build().start();
         BufferAllocator clientMemory = new RootAllocator()) {
      List<ThallusClient> greedy = new ArrayList<>();
      List<ThallusStream> unread = new ArrayList<>();
      try {
        // Four connections of the token, each a stream of 1 MiB batches with every credit and never read: each may
        // hold 32 MiB, so together they would take the server's 64 MiB if nothing bounded the credential.
        for (int i = 0; i < 4; i++) {
          ThallusClient client = ThallusClient.connect(clientMemory, server.getLocation(),
              ClientOptions.builder().token(TOKEN).credits(256).build());
          greedy.add(client);
          unread.add(client.query(io.thallus.QueryRequest.builder("SELECT i, i * 2 AS j FROM range(100000000) t(i)")
              .batchRows(65536).build()));
        }
        long held = io.thallus.testing.Memory.awaitSteady(() -> server.memoryUse().allocatedBytes(),
            Duration.ofSeconds(1), "the server's memory while the token's streams go unread");
        // The share is kept by waiting before each batch, so streams checking at once may each pass it by one
        // batch (1 MiB here); without it the four would hold the server's whole 64 MiB.
        assertThat(held).isLessThanOrEqualTo(perCredential + (4 << 20)).isGreaterThan(perCredential / 2);
        // Another credential still gets its whole answer from the memory left.
        try (ThallusClient alice = ThallusClient.connect(clientMemory, server.getLocation(),
                 ClientOptions.builder().user("alice", "wonderland").build());
             ThallusStream stream = alice.query(io.thallus.QueryRequest.builder(
                 "SELECT i FROM range(2000000) t(i)").batchRows(65536).build())) {
          long sum = 0;
          while (stream.hasNext()) {
            try (VectorSchemaRoot batch = stream.next()) {
              org.apache.arrow.vector.BigIntVector values = (org.apache.arrow.vector.BigIntVector) batch.getVector(0);
              for (int row = 0; row < batch.getRowCount(); row++) {
                sum += values.get(row);
              }
            }
          }
          assertThat(sum).isEqualTo(2_000_000L * (2_000_000L - 1) / 2);
        }
      } finally {
        for (ThallusStream stream : unread) {
          stream.close();
        }
        for (ThallusClient client : greedy) {
          client.close();
        }
      }
      io.thallus.testing.Memory.awaitZero(() -> server.memoryUse().allocatedBytes(), "the server's memory");
    }
  }
  /**
   * A connection's shm segments count in its credential's share, and segments left empty go back within seconds,
   * while the connection stays: a connection that has read a large result and gone quiet cannot hold its
   * credential's share from the credential's later streams (they would wait, then fail RESOURCE_EXHAUSTED).
   */
  @Test
  void aQuietConnectionsShmSegmentsGoBackSoItsCredentialsLaterStreamsAreServed() throws Exception {
    long perCredential = 16 << 20;
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = server(allocator, Admission.builder().maxMemoryPerCredential(perCredential).build())
             .transports(List.of("shm")).memoryLimit(64 << 20).memoryPerClient(32 << 20).build().start();
         BufferAllocator clientMemory = new RootAllocator();
         ThallusClient quiet = ThallusClient.connect(clientMemory, server.getLocation(),
             ClientOptions.builder().token(TOKEN).credits(16).build())) {
      // 1 MiB batches with 16 credits: the connection's segments grow to several MiB of the 16 MiB share.
      assertSum(quiet, 4_000_000, 131072);
      assertThat(server.memoryUse().peakBytes()).as("the segments and batches at their peak").isGreaterThan(4 << 20);
      // The connection stays open and reads nothing more: its segments go back to the server.
      io.thallus.testing.Memory.awaitZero(() -> server.memoryUse().allocatedBytes(),
          "the quiet connection's segments");
      try (ThallusClient later = ThallusClient.connect(clientMemory, server.getLocation(),
          ClientOptions.builder().token(TOKEN).credits(12).build())) {
        assertSum(later, 4_000_000, 131072);
      }
    }
  }

  /**
   * Ingested batches count in the credential's share: while the token's unread stream holds the share, an ingest of
   * the same token that asks for 32 credits of 1 MiB batches gets them only as the share has room, so it goes on one
   * batch at a time, writes every row, and the server never holds much more than the share.
   */
  @Test
  void anIngestTakesNoMoreThanItsCredentialsShareHasRoomForAndStillFinishes() throws Exception {
    long perCredential = 12 << 20;
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = server(allocator, Admission.builder().maxMemoryPerCredential(perCredential).build())
             .transports(List.of("cma", "ipc")).memoryLimit(128 << 20).memoryPerClient(64 << 20).build().start();
         BufferAllocator clientMemory = new RootAllocator();
         ThallusClient greedy = ThallusClient.connect(clientMemory, server.getLocation().withTransport("cma"),
             ClientOptions.builder().token(TOKEN).credits(256).build());
         ThallusStream unread = greedy.query(io.thallus.QueryRequest.builder(
             "SELECT i, i * 2 AS j FROM range(100000000) t(i)").batchRows(65536).build());
         ThallusClient writer = ThallusClient.connect(clientMemory, server.getLocation().withTransport("ipc"),
             ClientOptions.builder().token(TOKEN).build());
         org.apache.arrow.vector.BigIntVector values = new org.apache.arrow.vector.BigIntVector("v", clientMemory)) {
      io.thallus.testing.Memory.awaitSteady(() -> server.memoryUse().allocatedBytes(), Duration.ofSeconds(1),
          "the server's memory while the token's stream goes unread");
      int rows = 131072;
      values.allocateNew(rows);
      for (int row = 0; row < rows; row++) {
        values.set(row, row);
      }
      values.setValueCount(rows);
      int batches = 40;
      try (VectorSchemaRoot batch = VectorSchemaRoot.of(values);
           io.thallus.ThallusIngest ingest = writer.ingest(io.thallus.IngestRequest.builder("shared")
               .mode(io.thallus.IngestMode.CREATE).credits(32)
               .build(), batch.getSchema())) {
        for (int i = 0; i < batches; i++) {
          ingest.write(batch);
        }
        assertThat(ingest.finish().rows()).isEqualTo((long) batches * rows);
      }
      // The share, the stream's batch fetched ahead and the ingest's one batch with its copy on the way: far below the
      // 32 MiB more that 32 credits would have let the writer queue.
      assertThat(server.memoryUse().peakBytes()).isLessThanOrEqualTo(perCredential + (8 << 20));
      // The check's result needs room in the same credential's share, which the unread stream still fills: left
      // open, the check would wait out the server's memory wait (60 s) first.
      unread.close();
      try (ThallusStream check = writer.query("SELECT count(*), sum(v) FROM shared");
           VectorSchemaRoot result = check.next()) {
        assertThat(result.getVector(0).getObject(0)).isEqualTo((long) batches * rows);
        assertThat(result.getVector(1).getObject(0).toString())
            .isEqualTo(String.valueOf((long) batches * rows * (rows - 1) / 2));
      }
    }
  }

  private static void assertSum(ThallusClient client, long rows, int batchRows) {
    try (ThallusStream stream = client.query(io.thallus.QueryRequest.builder("SELECT i FROM range(" + rows
        + ") t(i)").batchRows(batchRows).build())) {
      assertThat(stream.transport()).isEqualTo("shm");
      long sum = 0;
      while (stream.hasNext()) {
        try (VectorSchemaRoot batch = stream.next()) {
          org.apache.arrow.vector.BigIntVector values = (org.apache.arrow.vector.BigIntVector) batch.getVector(0);
          for (int row = 0; row < batch.getRowCount(); row++) {
            sum += values.get(row);
          }
        }
      }
      assertThat(sum).isEqualTo(rows * (rows - 1) / 2);
    }
  }
}
