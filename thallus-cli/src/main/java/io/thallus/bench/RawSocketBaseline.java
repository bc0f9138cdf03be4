package io.thallus.bench;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.spi.BatchContents;
import io.thallus.spi.PackedBody;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.ArrowBuf;

/**
 * The ceiling for a TCP transport: the same buffers written with one gathering write per batch on a plain
 * loopback socket and read into one reused buffer, with no protocol, no pool and no Arrow on the receiving side.
 */
public final class RawSocketBaseline implements AutoCloseable {
  private static final long DEADLINE_SECONDS = 120;
  private final List<ByteBuffer[]> batches = new ArrayList<>();
  private final List<Long> sizes = new ArrayList<>();
  private final ByteBuffer receive;

  public RawSocketBaseline(List<BatchContents> prepared) {
    long largest = 0;
    for (BatchContents batch : prepared) {
      List<ByteBuffer> buffers = new ArrayList<>();
      long size = 0;
      for (ArrowBuf buffer : batch.records().getBuffers()) {
        int length = (int) buffer.readableBytes();
        if (length > 0) {
          buffers.add(buffer.nioBuffer(0, length));
          size += PackedBody.align(length);
        }
      }
      batches.add(buffers.toArray(ByteBuffer[]::new));
      sizes.add(size);
      largest = Math.max(largest, size);
    }
    receive = ByteBuffer.allocateDirect((int) largest);
  }

  /** Seconds to move every batch once from writer to reader. */
  public double transferSeconds() {
    try (ServerSocketChannel listener = ServerSocketChannel.open()) {
      listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      CompletableFuture<Void> written = CompletableFuture.runAsync(() -> write(listener));
      try (SocketChannel reader = SocketChannel.open(listener.getLocalAddress())) {
        reader.socket().setTcpNoDelay(true);
        // Blocking reads have no timeout of their own: closing the socket at the deadline ends a stuck read.
        CompletableFuture.runAsync(() -> closeQuietly(reader),
            CompletableFuture.delayedExecutor(DEADLINE_SECONDS, TimeUnit.SECONDS));
        long start = System.nanoTime();
        for (long size : sizes) {
          receive.clear().limit((int) size);
          while (receive.hasRemaining()) {
            if (reader.read(receive) < 0) {
              throw new IOException("raw socket writer stopped early");
            }
          }
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        written.get(DEADLINE_SECONDS, TimeUnit.SECONDS);
        return seconds;
      }
    } catch (Exception e) {
      throw ThallusException.of(StatusCode.INTERNAL, "raw socket baseline failed: " + e, e);
    }
  }

  private static void closeQuietly(SocketChannel channel) {
    try {
      channel.close();
    } catch (IOException ignored) {
      // Only used to end a stuck read.
    }
  }

  private void write(ServerSocketChannel listener) {
    try (SocketChannel writer = listener.accept()) {
      writer.socket().setTcpNoDelay(true);
      ByteBuffer zeros = ByteBuffer.allocateDirect(PackedBody.ALIGNMENT);
      for (ByteBuffer[] batch : batches) {
        // Pad each buffer to the 8-byte boundary the tcp transport also pads to, so both move the same bytes.
        List<ByteBuffer> gather = new ArrayList<>();
        for (ByteBuffer buffer : batch) {
          ByteBuffer view = buffer.duplicate();
          gather.add(view);
          int padding = (int) (PackedBody.align(view.remaining()) - view.remaining());
          if (padding > 0) {
            gather.add(zeros.slice(0, padding));
          }
        }
        ByteBuffer[] array = gather.toArray(ByteBuffer[]::new);
        long left = 0;
        for (ByteBuffer buffer : array) {
          left += buffer.remaining();
        }
        while (left > 0) {
          left -= writer.write(array);
        }
      }
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() {}
}
