package io.thallus.internal.transport.tcp;

import io.thallus.spi.Deadline;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;

/**
 * Whole reads and writes on a non-blocking socket, bounded by a deadline. Reads and writes each have a selector of
 * their own, used only to sleep until the socket is ready, so one thread may read while another writes (a data
 * connection carries bodies both ways: results to the client, ingested batches to the server), and the bytes go
 * straight between the kernel and the caller's buffers.
 */
final class SocketIo implements AutoCloseable {
  private final SocketChannel channel;
  private final Waiter reads;
  private final Waiter writes;

  /**
   * One selector for one direction: the thread that reads (or writes) sleeps in it until the socket is ready. Each
   * selector watches only its own direction, registered once: a wait is one epoll_wait, not also two epoll_ctl calls
   * to switch the interest on and off (a 4 MiB body over loopback waits several times).
   */
  private static final class Waiter {
    final Selector selector;

    Waiter(SocketChannel channel, int operation) throws IOException {
      this.selector = Selector.open();
      try {
        channel.register(selector, operation);
      } catch (IOException | RuntimeException e) {
        selector.close();
        throw e;
      }
    }

    /** Sleeps until the socket may be ready (level-triggered: the caller tries again either way). */
    void await(Deadline deadline, String what) throws IOException {
      long millis = deadline.remainingMillis();
      if (millis == 0) {
        throw deadline.expired(what);
      }
      try {
        selector.select(millis);
      } finally {
        selector.selectedKeys().clear();
      }
    }

    void close() {
      try {
        selector.close();
      } catch (IOException ignored) {
        // Nothing useful to do: the socket is closed next.
      }
    }
  }

  SocketIo(SocketChannel channel) throws IOException {
    this.channel = channel;
    channel.configureBlocking(false);
    this.reads = new Waiter(channel, SelectionKey.OP_READ);
    try {
      this.writes = new Waiter(channel, SelectionKey.OP_WRITE);
    } catch (IOException | RuntimeException e) {
      reads.close();
      throw e;
    }
  }

  SocketChannel channel() {
    return channel;
  }

  /** Writes every remaining byte of {@code buffers} (a gathering write) before the deadline. */
  void writeFully(ByteBuffer[] buffers, Deadline deadline, String what) throws IOException {
    int first = 0;
    while (first < buffers.length) {
      channel.write(buffers, first, buffers.length - first);
      while (first < buffers.length && !buffers[first].hasRemaining()) {
        first++;
      }
      if (first < buffers.length) {
        writes.await(deadline, what);
      }
    }
  }

  /** Fills {@code buffer} from the socket before the deadline; end of stream is an {@link EOFException}. */
  void readFully(ByteBuffer buffer, Deadline deadline, String what) throws IOException {
    while (buffer.hasRemaining()) {
      int read = channel.read(buffer);
      if (read < 0) {
        throw new EOFException("the peer closed the data connection during " + what);
      }
      if (read == 0) {
        reads.await(deadline, what);
      }
    }
  }

  @Override
  public void close() {
    reads.close();
    writes.close();
    try {
      channel.close();
    } catch (IOException ignored) {
      // Already broken; closing is all that is left.
    }
  }
}
