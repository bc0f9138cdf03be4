package io.thallus.internal.batch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.internal.batch.BatchLayouts;
import io.thallus.internal.transport.shm.ShmTransport;
import io.thallus.spi.BatchContents;
import io.thallus.spi.Deadline;
import io.thallus.spi.PlacedBody;
import io.thallus.spi.ServerSession;
import io.thallus.spi.ServerTransport;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The one ledger of held bodies, over a real shm server session (real segments under /dev/shm): what a client holds
 * stays within its budget, a placement that finds no room waits for the client's next release, and the end of the
 * connection frees every place and fails a placement still waiting.
 */
class HeldBatchesTest {
  private static final long BUDGET = 4L << 20;
  private static final int ROWS = 100_000; // 800 KB bodies: a handful fit in the budget

  private BufferAllocator allocator;
  private ServerTransport transport;
  private ServerSession session;
  private HeldBatches held;

  @BeforeEach
  void start() {
    allocator = new RootAllocator();
    transport = new ShmTransport().startServer(new ServerTransport.Context(allocator,
        new InetSocketAddress("127.0.0.1", 1), Duration.ofSeconds(10), BUDGET));
    session = transport.accept(new InetSocketAddress("127.0.0.1", 2), Map.of(), allocator);
    held = new HeldBatches(session, BUDGET);
  }

  @AfterEach
  void stop() {
    held.close();
    session.close();
    transport.close();
    allocator.close(); // fails on any byte still held
  }

  private PlacedBody place(long batchId, Duration wait) {
    try (BatchContents batch = batch()) {
      return held.place(1, batchId, BatchLayouts.pack(batch), Deadline.after(wait));
    }
  }

  /**
   * Places on a thread of its own and returns once that placement waits for a release (within 20 s), asserting it
   * does: a placement that ended instead (placed or failed) fails the assertion.
   */
  private CompletableFuture<PlacedBody> placeAndAwaitItsWait(long batchId, Duration wait) throws InterruptedException {
    CompletableFuture<PlacedBody> placed = new CompletableFuture<>();
    Thread placing = Thread.ofPlatform().name("placing-" + batchId).daemon(true).start(() -> {
      try {
        placed.complete(place(batchId, wait));
      } catch (Throwable failure) {
        placed.completeExceptionally(failure);
      }
    });
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!waitsForRelease(placing) && !placed.isDone() && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertThat(waitsForRelease(placing)).as("placement %d waits for a release (done: %s)", batchId, placed).isTrue();
    return placed;
  }

  private static boolean waitsForRelease(Thread thread) {
    for (StackTraceElement frame : thread.getStackTrace()) {
      if (frame.getClassName().equals(HeldBatches.class.getName()) && frame.getMethodName().equals("awaitRelease")) {
        return true;
      }
    }
    return false;
  }

  private BatchContents batch() {
    try (BigIntVector values = new BigIntVector("v", allocator)) {
      values.allocateNew(ROWS);
      for (int i = 0; i < ROWS; i++) {
        values.set(i, i);
      }
      values.setValueCount(ROWS);
      try (VectorSchemaRoot root = VectorSchemaRoot.of(values)) {
        return new BatchContents(List.of(), new VectorUnloader(root).getRecordBatch());
      }
    }
  }

  /** Places bodies until the ledger or the transport has no room left; returns how many fitted. */
  private int fill() {
    for (int id = 0; ; id++) {
      try {
        place(id, Duration.ofMillis(300));
      } catch (ThallusException e) {
        assertThat(e.code()).isEqualTo(StatusCode.RESOURCE_EXHAUSTED);
        assertThat(e.getMessage()).contains("the client holds " + id + " batches")
            .contains("limit per client is " + BUDGET);
        return id;
      }
    }
  }

  @Test
  void aPlacementWaitsForTheClientsReleaseAndThenTakesItsRoom() throws Exception {
    int fitted = fill();
    // The budget bounds them (no more than five 800 KB bodies in 4 MiB); shm's segment sizes may allow fewer.
    assertThat(fitted).isBetween(3, 5);
    assertThat(allocator.getAllocatedMemory()).as("segments, within the budget").isBetween(1L, BUDGET);

    CompletableFuture<PlacedBody> waiting = placeAndAwaitItsWait(99, Duration.ofSeconds(10));
    assertThat(waiting).as("no room until a release").isNotDone();
    // The oldest batch, as a consumer releases them: its segment empties and takes the next body.
    held.release(1, 0);
    PlacedBody next = waiting.get(10, TimeUnit.SECONDS);
    assertThat(next.parts()).isNotEmpty();
    // An id the ledger does not hold (released twice, or never placed) changes nothing.
    held.release(1, 0);
    held.release(7, 0);
  }

  @Test
  void theConnectionsEndFreesEveryPlaceAndFailsAWaitingPlacement() throws Exception {
    fill();
    CompletableFuture<PlacedBody> waiting = placeAndAwaitItsWait(99, Duration.ofSeconds(30));
    held.close();
    assertThatThrownBy(() -> waiting.get(10, TimeUnit.SECONDS))
        .hasCauseInstanceOf(ThallusException.class)
        .cause().hasMessageContaining("UNAVAILABLE");
    assertThatThrownBy(() -> place(100, Duration.ofSeconds(1))).hasMessageContaining("closed");
  }

  @Test
  void aBodyTheTransportCanNeverPlaceIsRefusedAtOnceNotAtTheDeadline() {
    // 8 MiB of one column: larger than shm may ever map for this client, with nothing held to wait for.
    try (BigIntVector values = new BigIntVector("v", allocator)) {
      values.allocateNew(1 << 20);
      values.setValueCount(1 << 20);
      try (VectorSchemaRoot root = VectorSchemaRoot.of(values);
           BatchContents batch = new BatchContents(List.of(), new VectorUnloader(root).getRecordBatch())) {
        long start = System.nanoTime();
        assertThatThrownBy(() -> held.place(1, 0, BatchLayouts.pack(batch), Deadline.after(Duration.ofSeconds(30))))
            .isInstanceOfSatisfying(ThallusException.class, e -> {
              assertThat(e.code()).isEqualTo(StatusCode.RESOURCE_EXHAUSTED);
              assertThat(e.getMessage()).contains("does not fit").contains("memoryPerClient");
            });
        assertThat(System.nanoTime() - start).isLessThan(TimeUnit.SECONDS.toNanos(10));
      }
    }
  }
}
