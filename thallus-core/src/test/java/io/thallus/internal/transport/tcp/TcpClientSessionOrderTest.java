package io.thallus.internal.transport.tcp;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.thallus.ThallusException;
import io.thallus.spi.BatchContents;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.BatchLayouts;
import io.thallus.spi.ClientOffer;
import io.thallus.spi.ClientSession;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.junit.jupiter.api.Test;

/**
 * A stream's END must not overtake its last batch, even in the moment the reader thread has read the batch's body
 * and not yet handed it over. The test holds the reader in that moment (its sink blocks) and sends END then: over a
 * real data socket, with the test playing the server's end of it.
 */
class TcpClientSessionOrderTest {
  @Test
  void anEndThatArrivesWhileTheLastBatchIsBeingHandedOverWaitsForIt() throws Exception {
    byte[] token = new byte[16];
    token[0] = 42;
    try (BufferAllocator allocator = new RootAllocator();
        ServerSocketChannel listener = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0))) {
      int port = ((InetSocketAddress) listener.getLocalAddress()).getPort();
      ClientOffer.Context context = new ClientOffer.Context(allocator, "127.0.0.1", port, Duration.ofSeconds(10),
          8 << 20, ByteBufAllocator.DEFAULT);
      ClientSession session = TcpClientSession.connect(context, Map.of(TcpTransport.PORT, String.valueOf(port),
          TcpTransport.TOKEN, HexFormat.of().formatHex(token)));
      try (session; SocketChannel data = listener.accept()) {
        data.read(ByteBuffer.allocate(token.length));

        List<String> seen = new CopyOnWriteArrayList<>();
        CountDownLatch handingOver = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        ClientSession.BatchSink sink = new ClientSession.BatchSink() {
          @Override
          public void deliver(BatchHeader header, BatchContents contents) {
            handingOver.countDown();
            await(letGo);
            seen.add("batch " + header.batchId() + " of " + contents.rowCount() + " rows");
            contents.close();
          }

          @Override
          public void fail(ThallusException error) {
            seen.add("failed: " + error.getMessage());
          }
        };

        try (BigIntVector values = new BigIntVector("v", allocator)) {
          for (int i = 0; i < 1000; i++) {
            values.setSafe(i, i * 7L);
          }
          values.setValueCount(1000);
          try (VectorSchemaRoot root = VectorSchemaRoot.of(values);
              BatchContents batch = new BatchContents(List.of(), new VectorUnloader(root).getRecordBatch())) {
            BatchLayouts.PackedBody body = BatchLayouts.pack(batch, 0);
            var bytes = BatchLayouts.copyInline(body, io.netty.buffer.Unpooled.directBuffer((int) body.length()));
            try {
              session.onBatch(new BatchHeader(1, 0, body.parts()), Unpooled.EMPTY_BUFFER, sink);
              data.write(bytes.nioBuffer());
            } finally {
              bytes.release();
            }
          }
        }

        assertThat(handingOver.await(10, TimeUnit.SECONDS)).as("the reader reached the sink").isTrue();
        CountDownLatch ended = new CountDownLatch(1);
        session.afterPendingBatches(() -> {
          seen.add("end");
          ended.countDown();
        });
        assertThat(seen).as("END waits while the batch is in hand").isEmpty();
        letGo.countDown();
        assertThat(ended.await(10, TimeUnit.SECONDS)).as("END ran after the batch").isTrue();
        assertThat(seen).containsExactly("batch 0 of 1000 rows", "end");
      }
      assertThat(allocator.getAllocatedMemory()).isZero();
    }
  }

  private static void await(CountDownLatch latch) {
    try {
      if (!latch.await(10, TimeUnit.SECONDS)) {
        throw new AssertionError("the test never let the batch go");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
