package io.thallus.rdma.transport;

import io.thallus.rdma.testing.DirectControlWriter;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBufAllocator;
import io.thallus.ThallusException;
import io.thallus.spi.BatchContents;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.ClientOffer;
import io.thallus.spi.ClientSession;
import io.thallus.spi.Deadline;
import io.thallus.spi.ServerSession;
import io.thallus.spi.ServerTransport;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A stream's END must not overtake its last batch, even in the moment the completion thread has the batch's read
 * in and has not yet handed the batch over. The test holds the client's completion thread in that moment (its sink
 * blocks) and sends END then. Real client and server transports on a real device (rxe0 in the Soft-RoCE guest,
 * through RxeGuestTest); the test carries the control messages between them.
 */
@Tag("rdma-device")
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ClientOrderTest {
  private static final Duration WAIT = Duration.ofSeconds(20);
  private static final int ROWS = 100_000;

  private BufferAllocator allocator;
  private BufferAllocator serverMemory;
  private BufferAllocator clientMemory;
  private ServerTransport server;
  private ClientOffer offer;
  private ServerSession serverSession;
  private ClientSession client;

  /** A real server transport and a real client session, connected; the test carries the control messages. */
  @BeforeEach
  void connect() {
    allocator = new RootAllocator();
    serverMemory = allocator.newChildAllocator("server", 0, Long.MAX_VALUE);
    clientMemory = allocator.newChildAllocator("client", 0, Long.MAX_VALUE);
    server = RdmaServer.start(new ServerTransport.Context(serverMemory, new InetSocketAddress("127.0.0.1", 1), WAIT,
        64L << 20));
    offer = RdmaClientSession.offer(new ClientOffer.Context(clientMemory, "127.0.0.1", 1, WAIT, 64L << 20,
        ByteBufAllocator.DEFAULT));
    serverSession = server.accept(new InetSocketAddress("127.0.0.1", 2), offer.parameters());
    client = offer.accept(serverSession.welcomeParameters());
  }

  @AfterEach
  void close() {
    client.close();
    serverSession.close();
    offer.close();
    server.close();
    clientMemory.close();
    serverMemory.close();
    allocator.close(); // fails on any byte still held
  }

  @Test
  void anEndThatArrivesWhileTheLastBatchIsBeingHandedOverWaitsForIt() throws Exception {
    List<String> seen = new CopyOnWriteArrayList<>();
    CountDownLatch handingOver = new CountDownLatch(1);
    CountDownLatch letGo = new CountDownLatch(1);
    ClientSession.BatchSink sink = new ClientSession.BatchSink() {
      @Override
      public void deliver(BatchHeader header, BatchContents contents) {
        handingOver.countDown();
        await(letGo);
        try (contents; BigIntVector values = new BigIntVector("v", clientMemory);
             VectorSchemaRoot root = VectorSchemaRoot.of(values)) {
          new VectorLoader(root).load(contents.records());
          long sum = 0;
          for (int i = 0; i < root.getRowCount(); i++) {
            sum += values.get(i);
          }
          seen.add("batch " + header.batchId() + " of " + root.getRowCount() + " rows, sum " + sum);
        }
      }

      @Override
      public void fail(ThallusException error) {
        seen.add("failed: " + error.getMessage());
      }
    };

    // The read may be handed over by the control thread itself (it looks for completions after posting) or by the
    // completion thread: either way this thread stays free to send the END.
    Thread control = Thread.ofPlatform().name("test-control").start(() -> send(sink, 0, ROWS));

    assertThat(handingOver.await(20, TimeUnit.SECONDS)).as("the read completed and reached the sink").isTrue();
    CountDownLatch ended = new CountDownLatch(1);
    client.afterPendingBatches(() -> {
      seen.add("end");
      ended.countDown();
    });
    assertThat(seen).as("END waits while the batch is in hand").isEmpty();
    letGo.countDown();
    assertThat(ended.await(20, TimeUnit.SECONDS)).as("END ran after the batch").isTrue();
    control.join(WAIT.toMillis());
    assertThat(control.isAlive()).as("the control thread finished").isFalse();
    long expectedSum = (long) ROWS * (ROWS - 1) / 2 * 3;
    assertThat(seen).containsExactly("batch 0 of " + ROWS + " rows, sum " + expectedSum, "end");
    serverSession.released(1, 0);
  }

  @Test
  void aSmallBatchBehindAReadWaitsForItAndOneWithNothingAheadIsHandedOverAtOnce() throws Exception {
    List<String> seen = new CopyOnWriteArrayList<>();
    CountDownLatch all = new CountDownLatch(3);
    ClientSession.BatchSink sink = new ClientSession.BatchSink() {
      @Override
      public void deliver(BatchHeader header, BatchContents contents) {
        try (contents) {
          seen.add(header.batchId() + ": " + contents.rowCount() + " rows"
              + (Thread.currentThread().getName().equals("test-control") ? " on the control thread" : ""));
        }
        all.countDown();
      }

      @Override
      public void fail(ThallusException error) {
        seen.add("failed: " + error.getMessage());
      }
    };
    // Batch 1 is inline and arrives while batch 0's read may still be in flight: it must not overtake it.
    onControlThread(() -> {
      send(sink, 0, ROWS);
      send(sink, 1, 10);
    });
    long until = System.nanoTime() + WAIT.toNanos();
    while (seen.size() < 2 && System.nanoTime() < until) {
      Thread.sleep(5);
    }
    assertThat(seen).hasSize(2);
    assertThat(seen.get(0)).startsWith("0: " + ROWS + " rows");
    assertThat(seen.get(1)).startsWith("1: 10 rows");
    // Nothing is ahead of batch 2: it is handed over during onBatch, on the thread that called it.
    onControlThread(() -> {
      send(sink, 2, 10);
      seen.add("onBatch returned");
    });
    assertThat(all.await(20, TimeUnit.SECONDS)).isTrue();
    assertThat(seen.subList(2, seen.size())).containsExactly("2: 10 rows on the control thread",
        "onBatch returned");
    serverSession.released(1, 0);
  }

  private static void onControlThread(Runnable work) throws InterruptedException {
    Thread control = Thread.ofPlatform().name("test-control").start(work);
    control.join(WAIT.toMillis());
    assertThat(control.isAlive()).as("the control thread finished").isFalse();
  }

  private void send(ClientSession.BatchSink sink, long batchId, int rows) {
    try (BatchContents batch = batch(serverMemory, rows)) {
      serverSession.send(1, batchId, batch, new DirectControlWriter((header, inline, onWritten) -> {
        try {
          client.onBatch(header, inline, sink);
        } finally {
          inline.release();
        }
        onWritten.run();
      }), Deadline.after(WAIT));
    }
  }

  /** One BIGINT column of {@code rows} values {@code 3 * i}: inline up to a few thousand rows, else read. */
  private static BatchContents batch(BufferAllocator allocator, int rows) {
    try (BigIntVector values = new BigIntVector("v", allocator)) {
      values.allocateNew(rows);
      for (int i = 0; i < rows; i++) {
        values.set(i, 3L * i);
      }
      values.setValueCount(rows);
      try (VectorSchemaRoot root = VectorSchemaRoot.of(values)) {
        return new BatchContents(List.of(), new VectorUnloader(root).getRecordBatch());
      }
    }
  }

  private static void await(CountDownLatch latch) {
    try {
      if (!latch.await(20, TimeUnit.SECONDS)) {
        throw new AssertionError("the test never let the batch go");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
