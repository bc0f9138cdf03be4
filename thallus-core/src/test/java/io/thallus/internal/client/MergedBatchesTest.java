package io.thallus.internal.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.thallus.spi.BatchContents;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The merge of a split query's streams holds at most a batch per stream, also while several streams' batches arrive
 * at once: each stream waits for its next batch only with a place in the queue reserved. The streams here hand out
 * real Arrow batches when the test lets them, so the moment each arrives is the test's.
 */
@Timeout(60)
class MergedBatchesTest {
  @Test
  void theQueueHoldsAtMostABatchPerStreamWhenBatchesArriveTogether() throws Exception {
    try (BufferAllocator allocator = new RootAllocator()) {
      GatedStream first = new GatedStream(allocator, 0);
      GatedStream second = new GatedStream(allocator, 100);
      List<Long> values = new ArrayList<>();
      try (MergedBatches merged = new MergedBatches(List.of(first, second), Duration.ofSeconds(30))) {
        await("both streams wait for a batch", () -> first.takes.get() == 1 && second.takes.get() == 1);
        first.letOne();
        await("the first stream's batch is queued", () -> merged.queued() == 1);
        // The second stream still waits with its place reserved: the first may not wait for another batch now.
        first.letOne();
        second.letOne();
        await("the second stream's batch is queued", () -> merged.queued() >= 2);
        assertThat(first.takes.get()).as("the first stream's waits: the queue is full").isEqualTo(1);
        assertThat(merged.queued()).isEqualTo(2);
        // The consumer takes one: one stream (either) reserves the place and waits for its batch, which fills it.
        values.add(valueOf(merged.take(), allocator));
        second.letOne();
        await("the freed place is filled again", () -> merged.queued() == 2);
        assertThat(first.takes.get() + second.takes.get()).as("one more wait for a batch").isEqualTo(3);
        first.finish();
        second.finish();
        for (BatchContents batch = merged.take(); batch != null; batch = merged.take()) {
          values.add(valueOf(batch, allocator));
        }
      }
      assertThat(values).doesNotHaveDuplicates().contains(0L, 100L).hasSizeBetween(3, 4);
      assertThat(allocator.getAllocatedMemory()).isZero();
    }
  }

  private static long valueOf(BatchContents batch, BufferAllocator allocator) {
    try (batch; BigIntVector vector = new BigIntVector("v", allocator);
         VectorSchemaRoot root = VectorSchemaRoot.of(vector)) {
      new org.apache.arrow.vector.VectorLoader(root).load(batch.records());
      return vector.get(0);
    }
  }

  private static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("waited 30 s in vain: " + what);
      }
      Thread.sleep(5);
    }
  }

  /** A stream of one-row batches (its first value, then the next), each handed out when the test lets it go. */
  private static final class GatedStream implements BatchSource {
    private final BufferAllocator allocator;
    private final Semaphore gate = new Semaphore(0);
    private final AtomicInteger takes = new AtomicInteger();
    private volatile boolean ended;
    private long next;

    GatedStream(BufferAllocator allocator, long first) {
      this.allocator = allocator;
      this.next = first;
    }

    void letOne() {
      gate.release();
    }

    void finish() {
      ended = true;
      gate.release(1000);
    }

    @Override
    public String transport() {
      return "test";
    }

    @Override
    public BatchContents take() {
      takes.incrementAndGet();
      try {
        if (!gate.tryAcquire(30, TimeUnit.SECONDS)) {
          throw new AssertionError("never let go");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return null;
      }
      if (ended) {
        return null;
      }
      try (BigIntVector vector = new BigIntVector("v", allocator);
           VectorSchemaRoot root = VectorSchemaRoot.of(vector)) {
        vector.allocateNew(1);
        vector.set(0, next++);
        root.setRowCount(1);
        return new BatchContents(List.of(), new VectorUnloader(root).getRecordBatch());
      }
    }

    @Override
    public StreamState.End end() {
      return null;
    }

    @Override
    public void cancel() {}

    @Override
    public void close() {
      finish();
    }
  }
}
