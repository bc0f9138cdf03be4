package io.thallus.internal.transport.tcp;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.internal.batch.BatchLayouts;
import io.thallus.internal.transport.ReceivePool;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.BodyFetcher;
import io.thallus.spi.Deadline;
import io.thallus.spi.FetchedBody;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedSelectorException;
import java.time.Duration;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The receiving end of a data connection, either way: bodies come in the order of their BATCH frames, and one
 * thread reads each, straight into a pooled buffer that core turns into the batch. Every announced body is read,
 * also one nobody takes any more, so the connection stays in step with its frames. With {@code skipRefused}, a body
 * the pool has no room for is read and thrown away and only its batch fails (the server's side: one client's
 * ingest fails, its connection goes on); without, the connection fails (the client's side, as before).
 */
final class BodyReader implements AutoCloseable {
  private static final int SKIP_CHUNK = 64 * 1024;

  /** A body to read next. */
  private record Fetch(BatchHeader header, long bodyLength, BodyFetcher.Fetched done) {}

  private final SocketIo io;
  private final ReceivePool pool;
  private final Duration ioTimeout;
  private final boolean skipRefused;
  private final LinkedBlockingQueue<Fetch> queue = new LinkedBlockingQueue<>();
  private final Thread thread;
  private volatile boolean closed;

  BodyReader(SocketIo io, ReceivePool pool, Duration ioTimeout, String threadName, boolean skipRefused) {
    this.io = io;
    this.pool = pool;
    this.ioTimeout = ioTimeout;
    this.skipRefused = skipRefused;
    this.thread = Thread.ofPlatform().name(threadName).daemon().unstarted(this::readLoop);
  }

  void start() {
    thread.start();
  }

  /** Queues the body {@code header} announces; called in frame order. */
  void fetch(BatchHeader header, BodyFetcher.Fetched done) {
    long bodyLength;
    try {
      bodyLength = BatchLayouts.bodyLength(header);
    } catch (ThallusException e) {
      done.failed(e);
      return;
    }
    if (closed) {
      done.failed(ThallusException.of(StatusCode.UNAVAILABLE, "the tcp data connection is closed"));
      return;
    }
    queue.add(new Fetch(header, bodyLength, done));
  }

  private void readLoop() {
    Fetch current = null;
    try {
      while (!closed) {
        current = queue.poll(250, TimeUnit.MILLISECONDS);
        if (current != null) {
          read(current);
          current = null;
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (IOException | ClosedSelectorException | ThallusException e) {
      ThallusException error = e instanceof ThallusException t ? t : ThallusException.of(StatusCode.UNAVAILABLE,
          "the tcp data connection failed: " + e.getMessage(), e);
      if (current != null && !closed) {
        current.done().failed(error);
      }
      closed = true;
      Fetch left;
      while ((left = queue.poll()) != null) {
        left.done().failed(error);
      }
    }
  }

  private void read(Fetch fetch) throws IOException {
    Deadline deadline = Deadline.after(ioTimeout);
    String what = "the body of batch " + fetch.header().batchId() + " of stream " + fetch.header().streamId();
    ReceivePool.Lease body;
    try {
      // A body larger than the pool is refused at once; one that must wait for room waits while the consumer
      // releases earlier batches, up to the deadline.
      body = pool.lend(fetch.bodyLength(), deadline);
    } catch (ThallusException refused) {
      if (!skipRefused) {
        throw refused;
      }
      skip(fetch.bodyLength(), deadline, what);
      fetch.done().failed(refused);
      return;
    }
    try {
      io.readFully(body.byteBuffer(), deadline, what);
    } catch (IOException | RuntimeException e) {
      body.release();
      throw e;
    }
    fetch.done().body(FetchedBody.mirrored(body.address(), fetch.bodyLength(), 0, false, body::release));
  }

  /** Reads {@code length} bytes and keeps none of them. */
  private void skip(long length, Deadline deadline, String what) throws IOException {
    ByteBuffer scratch = ByteBuffer.allocateDirect((int) Math.min(SKIP_CHUNK, Math.max(1, length)));
    long left = length;
    while (left > 0) {
      scratch.clear().limit((int) Math.min(scratch.capacity(), left));
      io.readFully(scratch, deadline, what);
      left -= scratch.limit();
    }
  }

  /** Stops reading; bodies still queued are dropped. Waits for the thread (it wakes within 250 ms). */
  @Override
  public void close() {
    if (closed && !thread.isAlive()) {
      return;
    }
    closed = true;
    thread.interrupt();
    try {
      if (thread != Thread.currentThread()) {
        thread.join(TimeUnit.SECONDS.toMillis(10));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    queue.clear();
  }
}
