package io.thallus.cli.sidebyside;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.spi.BatchContents;
import io.thallus.spi.PackedBody;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.ArrowBuf;

/**
 * The ceiling for a TCP transport: one request and the same buffers back, written with one gathering write per
 * batch on a plain loopback connection kept open between pulls, and read into one reused buffer — no protocol, no
 * pool, no Arrow on the receiving side, one thread at each end blocked in its socket call. For a one-row result
 * this is a socket's round trip, the floor any request/response protocol pays; for a large one, the socket's
 * throughput.
 */
public final class RawSocketBaseline implements AutoCloseable {
  private static final long DEADLINE_SECONDS = 120;
  private static final int RECEIVE_BUFFER_BYTES = 512 << 10;
  private final List<ByteBuffer[]> batches = new ArrayList<>();
  private final ByteBuffer receive;
  private final ByteBuffer request = ByteBuffer.allocateDirect(1);
  private final long resultBytes;
  private final ServerSocketChannel listener;
  private final SocketChannel reader;
  private final Thread writer;
  /** Closes the connection when a pull passes its deadline: blocking reads have no timeout of their own. */
  private final ScheduledExecutorService watchdog = Executors.newSingleThreadScheduledExecutor(runnable -> {
    Thread thread = new Thread(runnable, "raw-socket-watchdog");
    thread.setDaemon(true);
    return thread;
  });

  public RawSocketBaseline(List<BatchContents> prepared) {
    ByteBuffer zeros = ByteBuffer.allocateDirect(PackedBody.ALIGNMENT);
    long total = 0;
    for (BatchContents batch : prepared) {
      // Each buffer padded to the 8-byte boundary the tcp transport also pads to, so both move the same bytes.
      List<ByteBuffer> gather = new ArrayList<>();
      for (ArrowBuf buffer : batch.records().getBuffers()) {
        int length = (int) buffer.readableBytes();
        if (length > 0) {
          gather.add(buffer.nioBuffer(0, length));
          int padding = (int) (PackedBody.align(length) - length);
          if (padding > 0) {
            gather.add(zeros.slice(0, padding));
          }
          total += PackedBody.align(length);
        }
      }
      batches.add(gather.toArray(ByteBuffer[]::new));
    }
    resultBytes = total;
    receive = ByteBuffer.allocateDirect((int) Math.min(Integer.MAX_VALUE - 8, Math.max(1, largestBatch())));
    try {
      listener = ServerSocketChannel.open();
      listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      reader = SocketChannel.open();
      // A fixed, modest receive buffer: on loopback the bytes then stay in cache between the writer's copy in and
      // the reader's copy out. Left to autotuning, a kept connection's buffer grows to megabytes and the same
      // transfer took 30-50% longer (190 vs 125-135 ms for 650 MB; 256 KiB-512 KiB was fastest).
      reader.setOption(StandardSocketOptions.SO_RCVBUF, RECEIVE_BUFFER_BYTES);
      reader.connect(listener.getLocalAddress());
      reader.socket().setTcpNoDelay(true);
      SocketChannel accepted = listener.accept();
      accepted.socket().setTcpNoDelay(true);
      writer = Thread.ofPlatform().daemon().name("raw-socket-writer").start(() -> serve(accepted));
    } catch (IOException e) {
      throw ThallusException.of(StatusCode.INTERNAL, "raw socket baseline cannot connect: " + e, e);
    }
  }

  private long largestBatch() {
    long largest = 0;
    for (ByteBuffer[] batch : batches) {
      long size = 0;
      for (ByteBuffer buffer : batch) {
        size += buffer.remaining();
      }
      largest = Math.max(largest, size);
    }
    return largest;
  }

  /** Seconds from sending the request to having read every batch's bytes. */
  public double transferSeconds() {
    ScheduledFuture<?> stuck = watchdog.schedule(this::closeQuietly, DEADLINE_SECONDS, TimeUnit.SECONDS);
    try {
      long start = System.nanoTime();
      request.clear();
      while (request.hasRemaining()) {
        reader.write(request);
      }
      long left = resultBytes;
      while (left > 0) {
        receive.clear().limit((int) Math.min(receive.capacity(), left));
        int read = reader.read(receive);
        if (read < 0) {
          throw new IOException("raw socket writer stopped early");
        }
        left -= read;
      }
      return (System.nanoTime() - start) / 1e9;
    } catch (IOException e) {
      throw ThallusException.of(StatusCode.INTERNAL, "raw socket baseline failed: " + e, e);
    } finally {
      stuck.cancel(false);
    }
  }

  /** The writing end: for every request byte, every batch with one gathering write each. */
  private void serve(SocketChannel connection) {
    ByteBuffer asked = ByteBuffer.allocateDirect(1);
    try (connection) {
      while (true) {
        asked.clear();
        if (connection.read(asked) < 0) {
          return;
        }
        for (ByteBuffer[] batch : batches) {
          ByteBuffer[] views = new ByteBuffer[batch.length];
          long left = 0;
          for (int i = 0; i < batch.length; i++) {
            views[i] = batch[i].duplicate();
            left += views[i].remaining();
          }
          while (left > 0) {
            left -= connection.write(views);
          }
        }
      }
    } catch (IOException closed) {
      // The baseline was closed (or timed out): the connection is over.
    }
  }

  private void closeQuietly() {
    try {
      reader.close();
    } catch (IOException ignored) {
      // Only used to end a stuck read.
    }
  }

  @Override
  public void close() {
    watchdog.shutdownNow();
    closeQuietly();
    try {
      listener.close();
    } catch (IOException ignored) {
      // Nothing is left to free.
    }
    try {
      writer.join(TimeUnit.SECONDS.toMillis(5));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
