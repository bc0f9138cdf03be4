package io.thallus.internal.client;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.internal.protocol.Message;
import io.thallus.spi.BatchContents;
import io.thallus.spi.Deadline;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The client's side of one ingest: batches go out as the server grants credits (one per batch its engine has
 * taken), then END, and the server's END or ERROR is the answer. Closing before the answer cancels the ingest and
 * waits (within the timeout) until the server has rolled it back.
 */
public final class IngestState implements AutoCloseable {
  /** What the server said at the end: the rows the table received. */
  public record End(long rows, long batches, long bytes, long serverNanos) {}

  private final ClientConnection connection;
  private final int id;
  private final Duration timeout;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  // Guarded by lock.
  private int credits;
  private End end;
  private ThallusException failure;
  private boolean finishing;
  private boolean closed;
  // Touched only by the writing thread.
  private long batchId;
  private long rows;
  private long bytes;

  IngestState(ClientConnection connection, int id, Duration timeout) {
    this.connection = connection;
    this.id = id;
    this.timeout = timeout;
  }

  public int id() {
    return id;
  }

  public String transport() {
    return connection.transport();
  }

  /**
   * Sends one batch (and closes it), once the server has a credit for it; throws the ingest's failure if the server
   * has given up already.
   */
  public void send(BatchContents contents) {
    try (contents) {
      Deadline deadline = Deadline.after(timeout);
      lock.lock();
      try {
        checkWritable();
        while (credits == 0) {
          await(deadline, "the server to take ingest " + id + "'s next batch");
          checkWritable();
        }
        credits--;
      } finally {
        lock.unlock();
      }
      rows += contents.rowCount();
      bytes += contents.bufferBytes();
      connection.ingestSender().send(id, batchId++, contents.retain(), deadline);
    }
  }

  /** The largest frame this server takes (its default when it did not say). */
  public long maxFrameBytes() {
    int limit = connection.serverMaxFrameBytes();
    return limit > 0 ? limit : 4 << 20;
  }

  /** Whether batches too large for a frame leave it on this connection (a transport with a write direction). */
  public boolean placesBodies() {
    return connection.ingestSender().placesBodies();
  }

  /**
   * The bytes of the BATCH frame that would carry {@code contents}: its header (a node per column, a descriptor per
   * buffer, so it grows with the schema's width) and, unless the body leaves the frame, the body.
   */
  public long frameBytes(BatchContents contents) {
    long header = 14;
    List<org.apache.arrow.vector.ipc.message.ArrowRecordBatch> parts = new java.util.ArrayList<>();
    contents.dictionaries().forEach(dictionary -> parts.add(dictionary.getDictionary()));
    parts.add(contents.records());
    for (org.apache.arrow.vector.ipc.message.ArrowRecordBatch part : parts) {
      header += 25 + 16L * part.getNodes().size() + 20L * part.getBuffers().size();
    }
    return header + (placesBodies() ? 0 : connection.ingestSender().inlineFrameBytes(contents));
  }

  private void checkWritable() {
    if (failure != null) {
      throw failure;
    }
    if (finishing || closed) {
      throw ThallusException.of(StatusCode.FAILED_PRECONDITION, "ingest " + id + " is "
          + (closed ? "closed" : "finished") + ": no more batches");
    }
  }

  /** Says the last batch is sent and waits for the server's answer: the rows written, or its error. */
  public End finish() {
    lock.lock();
    try {
      checkWritable();
      finishing = true;
    } finally {
      lock.unlock();
    }
    connection.send(new Message.End(id, rows, batchId, bytes, 0, 0));
    Deadline deadline = Deadline.after(timeout);
    lock.lock();
    try {
      while (end == null && failure == null) {
        await(deadline, "the server to commit ingest " + id);
      }
      if (failure != null) {
        throw failure;
      }
      return end;
    } finally {
      lock.unlock();
    }
  }

  private void await(Deadline deadline, String what) {
    long left = deadline.remainingNanos();
    if (left == 0) {
      throw deadline.expired(what);
    }
    try {
      changed.awaitNanos(Math.min(left, TimeUnit.SECONDS.toNanos(1)));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw ThallusException.of(StatusCode.CANCELLED, "interrupted while waiting for " + what);
    }
  }

  void onCredits(int more) {
    lock.lock();
    try {
      credits += more;
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  void onEnd(End stats) {
    lock.lock();
    try {
      if (failure == null) {
        end = stats;
      }
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  void onFailure(ThallusException error) {
    lock.lock();
    try {
      if (end == null && failure == null) {
        failure = error;
      }
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Ends the ingest. Before the server's answer this cancels it and waits, up to the timeout, for the server to say
   * it has stopped (it rolls back: nothing of the ingest is written). Idempotent.
   */
  @Override
  public void close() {
    boolean cancel;
    lock.lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      cancel = end == null && failure == null;
    } finally {
      lock.unlock();
    }
    try {
      if (cancel) {
        connection.send(new Message.Cancel(id));
        Deadline deadline = Deadline.after(timeout);
        lock.lock();
        try {
          while (end == null && failure == null && !deadline.isExpired()) {
            await(deadline, "the server to stop ingest " + id);
          }
        } catch (ThallusException gaveUp) {
          // The connection's own timeout ends it; closing must not throw for it.
        } finally {
          lock.unlock();
        }
      }
    } finally {
      connection.forget(this);
    }
  }
}
