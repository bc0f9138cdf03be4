package io.thallus.rdma.transport;

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
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
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

  @Test
  void anEndThatArrivesWhileTheLastBatchIsBeingHandedOverWaitsForIt() throws Exception {
    try (BufferAllocator allocator = new RootAllocator()) {
      try (BufferAllocator serverMemory = allocator.newChildAllocator("server", 0, Long.MAX_VALUE);
           BufferAllocator clientMemory = allocator.newChildAllocator("client", 0, Long.MAX_VALUE);
           ServerTransport server = RdmaServer.start(new ServerTransport.Context(serverMemory,
               new InetSocketAddress("127.0.0.1", 1), WAIT, 64L << 20));
           ClientOffer offer = RdmaClientSession.offer(new ClientOffer.Context(clientMemory, "127.0.0.1", 1, WAIT,
               64L << 20, ByteBufAllocator.DEFAULT));
           ServerSession serverSession = server.accept(new InetSocketAddress("127.0.0.1", 2), offer.parameters());
           ClientSession client = offer.accept(serverSession.welcomeParameters())) {
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
              new org.apache.arrow.vector.VectorLoader(root).load(contents.records());
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

        try (BatchContents batch = batch(serverMemory)) {
          serverSession.send(1, 0, batch, (header, inline, onWritten) -> {
            try {
              client.onBatch(header, inline, sink);
            } finally {
              inline.release();
            }
            onWritten.run();
          }, Deadline.after(WAIT));
        }

        assertThat(handingOver.await(20, TimeUnit.SECONDS)).as("the read completed and reached the sink").isTrue();
        CountDownLatch ended = new CountDownLatch(1);
        client.afterPendingBatches(() -> {
          seen.add("end");
          ended.countDown();
        });
        assertThat(seen).as("END waits while the batch is in hand").isEmpty();
        letGo.countDown();
        assertThat(ended.await(20, TimeUnit.SECONDS)).as("END ran after the batch").isTrue();
        long expectedSum = (long) ROWS * (ROWS - 1) / 2 * 3;
        assertThat(seen).containsExactly("batch 0 of " + ROWS + " rows, sum " + expectedSum, "end");
        serverSession.released(1, 0);
      }
      assertThat(allocator.getAllocatedMemory()).isZero();
    }
  }

  /** One BIGINT column, {@code 3 * i}: far larger than what goes inline, so it takes the RDMA READ path. */
  private static BatchContents batch(BufferAllocator allocator) {
    try (BigIntVector values = new BigIntVector("v", allocator)) {
      values.allocateNew(ROWS);
      for (int i = 0; i < ROWS; i++) {
        values.set(i, 3L * i);
      }
      values.setValueCount(ROWS);
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
