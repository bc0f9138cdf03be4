package io.thallus.internal.batch;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.thallus.ThallusException;
import io.thallus.internal.transport.tcp.TcpTransport;
import io.thallus.spi.BatchContents;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.ClientOffer;
import io.thallus.spi.ClientSession;
import io.thallus.spi.PackedBody;
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
 * The one ordering rule, in core: a stream's END must not overtake its batches, however their fetches finish, and one
 * stream's slow fetch holds up no other stream. A real tcp client session over a real data socket, with the test
 * playing the server's end of it; the receiver blocks to hold a fetched batch in the moment of its hand-over.
 */
class BatchReceiverOrderTest {
  private static final org.apache.arrow.vector.types.pojo.Schema SCHEMA = new org.apache.arrow.vector.types.pojo.Schema(
      List.of(org.apache.arrow.vector.types.pojo.Field.nullable("v", new org.apache.arrow.vector.types.pojo.ArrowType.Int(64, true))));
  private static final int ROWS = 10_000; // 80 KB: out of line, over the inline limit

  @Test
  void anEndWaitsForTheBatchesBeforeItAndAnotherStreamDoesNot() throws Exception {
    byte[] token = new byte[16];
    token[0] = 42;
    try (BufferAllocator allocator = new RootAllocator();
        ServerSocketChannel listener = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0))) {
      int port = ((InetSocketAddress) listener.getLocalAddress()).getPort();
      ClientOffer offer = new TcpTransport().offer(new ClientOffer.Context(allocator, "127.0.0.1", port,
          Duration.ofSeconds(10), 8 << 20, ByteBufAllocator.DEFAULT));
      ClientSession session = offer.accept(Map.of("tcp.port", String.valueOf(port),
          "tcp.token", HexFormat.of().formatHex(token)));
      List<String> seen = new CopyOnWriteArrayList<>();
      CountDownLatch handingOver = new CountDownLatch(1);
      CountDownLatch letGo = new CountDownLatch(1);
      BatchReceiver.Fetchers fetchers = BatchReceiver.Fetchers.of(session, session.serverHoldsBodies());
      BatchReceiver inbox = new BatchReceiver(fetchers, false, allocator, () -> "the test's memory", () -> Long.MAX_VALUE,
          new BatchReceiver.Consumer() {
        @Override
        public void batch(int streamId, BatchContents contents) {
          if (streamId == 1) {
            handingOver.countDown();
            await(letGo);
          }
          seen.add("stream " + streamId + ": " + contents.rowCount() + " rows");
          contents.close();
        }

        @Override
        public void failed(int streamId, ThallusException error) {
          seen.add("failed: " + error.getMessage());
        }

        @Override
        public void refused(int streamId, ThallusException error) {
          seen.add("refused on " + streamId + ": " + error.getMessage());
        }

        @Override
        public void released(int streamId, long batchId) {
          seen.add("released on " + streamId);
        }

        @Override
        public boolean isOpen(int streamId) {
          return true;
        }
      });
      try (session; inbox; SocketChannel data = listener.accept()) {
        data.read(ByteBuffer.allocate(token.length));
        try (BatchContents big = batch(allocator, ROWS); BatchContents small = batch(allocator, 10)) {
          inbox.expect(1, SCHEMA);
          inbox.expect(2, SCHEMA);
          PackedBody body = BatchLayouts.pack(big);
          inbox.onBatch(new BatchHeader(1, 0, body.parts()), Unpooled.EMPTY_BUFFER);
          CountDownLatch firstEnded = new CountDownLatch(1);
          inbox.afterBatches(1, () -> {
            seen.add("end of stream 1");
            firstEnded.countDown();
          });
          // Stream 2's batch comes inline and its END right after: neither waits for stream 1's body.
          PackedBody tiny = BatchLayouts.pack(small);
          ByteBuf inline = BatchLayouts.copyInline(tiny, Unpooled.directBuffer((int) tiny.length()));
          try {
            inbox.onBatch(new BatchHeader(2, 0, tiny.parts()), inline);
          } finally {
            inline.release();
          }
          inbox.afterBatches(2, () -> seen.add("end of stream 2"));
          assertThat(seen).containsExactly("stream 2: 10 rows", "end of stream 2");

          for (ByteBuffer part : body.gatherList()) {
            data.write(part);
          }
          assertThat(handingOver.await(10, TimeUnit.SECONDS)).as("the reader reached the receiver").isTrue();
          assertThat(seen).as("END waits while the batch is in hand").hasSize(2);
          letGo.countDown();
          assertThat(firstEnded.await(10, TimeUnit.SECONDS)).as("END ran after the batch").isTrue();
          assertThat(seen).containsExactly("stream 2: 10 rows", "end of stream 2", "stream 1: " + ROWS + " rows",
              "end of stream 1");
        }
      }
      offer.close();
      assertThat(allocator.getAllocatedMemory()).isZero();
    }
  }

  @Test
  void aBatchBeforeItsSchemaIsRefusedAndTheStreamTakesNoMore() {
    try (BufferAllocator allocator = new RootAllocator()) {
      List<String> seen = new CopyOnWriteArrayList<>();
      BatchReceiver.Fetchers none = new BatchReceiver.Fetchers() {
        @Override
        public io.thallus.spi.BodyFetcher fetcher() {
          throw new AssertionError("inline batches need no fetcher");
        }

        @Override
        public boolean peerHoldsBodies() {
          return false;
        }
      };
      try (BatchReceiver inbox = new BatchReceiver(none, false, allocator, () -> "the test's memory", () -> Long.MAX_VALUE,
          new BatchReceiver.Consumer() {
            @Override
            public void batch(int streamId, BatchContents contents) {
              seen.add("batch on " + streamId);
              contents.close();
            }

            @Override
            public void refused(int streamId, ThallusException error) {
              seen.add("refused on " + streamId + ": " + error.status().description());
            }

            @Override
            public void failed(int streamId, ThallusException error) {
              seen.add("failed on " + streamId);
            }

            @Override
            public void released(int streamId, long batchId) {}

            @Override
            public boolean isOpen(int streamId) {
              return true;
            }
          });
          BatchContents small = batch(allocator, 10)) {
        PackedBody tiny = BatchLayouts.pack(small);
        for (int batchId = 0; batchId < 2; batchId++) {
          ByteBuf inline = BatchLayouts.copyInline(tiny, Unpooled.directBuffer((int) tiny.length()));
          try {
            inbox.onBatch(new BatchHeader(3, batchId, tiny.parts()), inline);
          } finally {
            inline.release();
          }
        }
        assertThat(seen).containsExactly("refused on 3: stream 3 sent a batch before its schema");
      }
      assertThat(allocator.getAllocatedMemory()).as("refused batches are freed").isZero();
    }
  }

  private static BatchContents batch(BufferAllocator allocator, int rows) {
    try (BigIntVector values = new BigIntVector("v", allocator)) {
      for (int i = 0; i < rows; i++) {
        values.setSafe(i, i * 7L);
      }
      values.setValueCount(rows);
      try (VectorSchemaRoot root = VectorSchemaRoot.of(values)) {
        return new BatchContents(List.of(), new VectorUnloader(root).getRecordBatch());
      }
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
