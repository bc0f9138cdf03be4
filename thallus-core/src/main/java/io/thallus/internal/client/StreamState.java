package io.thallus.internal.client;

import io.thallus.Status;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.internal.protocol.Message;
import io.thallus.spi.BatchContents;
import io.thallus.spi.Deadline;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The client's side of one stream: what the connection has received for it, in order, and the consumer's end of
 * the credit loop (every batch taken grants the server one more).
 */
public final class StreamState implements BatchSource {
  /** What the stream said at its end. */
  public record End(long rows, long batches, long bytes, long serverNanos, long serverCpuNanos) {}

  private final ClientConnection connection;
  private final int id;
  private final Duration timeout;
  /**
   * Credits are returned this many at a time: half the window, so the server never runs dry while a NEXT travels,
   * and half the NEXT messages (and the thread wake-ups each costs on both sides) of granting every batch.
   */
  private final int grantEvery;
  /**
   * How long a consumer waits for the next batch before it reports its releases and owed credits without waiting
   * for grantEvery: short against a deadline, long against the gap between batches that flow, so batches that flow
   * keep the halved NEXT count.
   */
  private static final long SETTLE_AFTER_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
  private int owed;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition arrived = lock.newCondition();
  private final ArrayDeque<BatchContents> batches = new ArrayDeque<>();
  private Schema schema;
  private End end;
  private ThallusException failure;
  private boolean closed;
  private long arrivedBatches;
  private long arrivedRows;

  StreamState(ClientConnection connection, int id, Duration timeout, int credits) {
    this.connection = connection;
    this.id = id;
    this.timeout = timeout;
    this.grantEvery = Math.max(1, credits / 2);
  }

  public int id() {
    return id;
  }

  @Override
  public String transport() {
    return connection.transport();
  }

  /** Waits for OPENED: the schema (in IPC message form), or the server's error. */
  public Schema awaitSchema() {
    Deadline deadline = Deadline.after(timeout);
    lock.lock();
    try {
      while (schema == null && failure == null) {
        awaitArrival(deadline, "the server to open stream " + id);
      }
      if (schema == null) {
        throw failure;
      }
      return schema;
    } finally {
      lock.unlock();
    }
  }

  /** The next batch (the caller owns it), or null once the stream has ended. Throws the stream's failure. */
  @Override
  public BatchContents take() {
    Deadline deadline = Deadline.after(timeout);
    BatchContents batch;
    int grant = 0;
    lock.lock();
    try {
      boolean settled = false;
      while (batches.isEmpty() && end == null && failure == null) {
        if (closed) {
          throw ThallusException.of(StatusCode.FAILED_PRECONDITION, "stream " + id + " is closed");
        }
        if (settled) {
          awaitArrival(deadline, "batch data on stream " + id);
        } else if (!awaitArrival(SETTLE_AFTER_NANOS)) {
          // Nothing came for a while: the server may be waiting on memory this consumer has released but not yet
          // reported (releases ride on the credit grants, every grantEvery batches). Tell it now, with the credits
          // owed, so a tight budget cannot stall both sides until the deadline.
          settled = true;
          int owedNow = owed;
          owed = 0;
          lock.unlock();
          try {
            connection.grant(id, owedNow);
          } finally {
            lock.lock();
          }
        }
      }
      batch = batches.poll();
      if (batch == null) {
        if (failure != null) {
          throw failure;
        }
        return null;
      }
      if (++owed >= grantEvery) {
        grant = owed;
        owed = 0;
      }
    } finally {
      lock.unlock();
    }
    if (grant > 0) {
      connection.grant(id, grant);
    }
    return batch;
  }

  @Override
  public End end() {
    lock.lock();
    try {
      return end;
    } finally {
      lock.unlock();
    }
  }

  /** Whether something arrived (or the stream ended) within {@code nanos}; the lock is held. */
  private boolean awaitArrival(long nanos) {
    try {
      long left = nanos;
      while (batches.isEmpty() && end == null && failure == null && !closed && left > 0) {
        left = arrived.awaitNanos(left);
      }
      return left > 0;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw ThallusException.of(StatusCode.CANCELLED, "interrupted while waiting for batch data on stream " + id);
    }
  }

  private void awaitArrival(Deadline deadline, String what) {
    long left = deadline.remainingNanos();
    if (left == 0) {
      throw deadline.expired(what);
    }
    try {
      arrived.awaitNanos(Math.min(left, TimeUnit.SECONDS.toNanos(1)));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw ThallusException.of(StatusCode.CANCELLED, "interrupted while waiting for " + what);
    }
  }

  void onOpened(Schema opened) {
    lock.lock();
    try {
      schema = opened;
    } finally {
      lock.unlock();
    }
    wakeConsumer();
  }

  /** The stream's next batch, already checked against its schema by the connection's receiver. */
  void onBatch(BatchContents contents) {
    lock.lock();
    try {
      arrivedBatches++;
      arrivedRows += contents.rowCount();
      if (!closed && end == null && failure == null) {
        batches.add(contents);
        contents = null;
      }
    } finally {
      lock.unlock();
    }
    if (contents == null) {
      wakeConsumer();
    } else {
      contents.close();
    }
  }

  /** A batch of the server's that cannot be read safely (it lies about offsets, lengths or indices) was refused. */
  void onRefused(ThallusException reason) {
    refuse(ThallusException.of(reason.status().code(), "the server sent a batch of stream " + id + " that cannot be "
        + "read: " + reason.status().description(), reason));
  }

  /** Fails the stream for a batch of the server's that was refused, and tells the server to stop it. */
  private void refuse(ThallusException error) {
    boolean running;
    lock.lock();
    try {
      running = !closed && end == null && failure == null;
      if (failure == null && end == null) {
        failure = error;
      }
    } finally {
      lock.unlock();
    }
    if (running) {
      connection.send(new Message.Close(id));
    }
    wakeConsumer();
    connection.forget(this);
  }

  /**
   * The server's END. It names how many batches and rows it sent, so a batch lost or overtaken on the way turns into
   * an error here instead of a silently shorter result.
   */
  void onEnd(End stats) {
    lock.lock();
    try {
      if (arrivedBatches == stats.batches() && arrivedRows == stats.rows()) {
        end = stats;
      } else if (failure == null) {
        failure = ThallusException.of(StatusCode.INTERNAL, "stream " + id + " ended after the server sent "
            + stats.batches() + " batches of " + stats.rows() + " rows, but " + arrivedBatches + " batches of "
            + arrivedRows + " rows arrived before its end");
      }
    } finally {
      lock.unlock();
    }
    wakeConsumer();
    connection.forget(this);
  }

  void onFailure(ThallusException error) {
    lock.lock();
    try {
      if (failure == null && end == null) {
        failure = error;
      }
    } finally {
      lock.unlock();
    }
    wakeConsumer();
    connection.forget(this);
  }

  /**
   * Wakes a consumer waiting for what has just arrived; on the connection's event loop, once the whole socket read
   * has been handed out, so a small result's OPENED, BATCH and END, read together, wake it once rather than three
   * times (each wake-up a context switch, and the consumer would contend for this lock while the loop delivers).
   */
  private void wakeConsumer() {
    if (!connection.wakeAfterRead(this)) {
      wakeNow();
    }
  }

  void wakeNow() {
    lock.lock();
    try {
      arrived.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /** Asks the server to stop; the consumer then sees CANCELLED (batches already here are still delivered). */
  @Override
  public void cancel() {
    if (isOpen()) {
      connection.send(new Message.Cancel(id));
    }
  }

  private boolean isOpen() {
    lock.lock();
    try {
      return !closed && end == null && failure == null;
    } finally {
      lock.unlock();
    }
  }

  /** Frees every batch not taken and, if the stream is still running, tells the server to stop it. Idempotent. */
  @Override
  public void close() {
    boolean running;
    lock.lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      running = end == null && failure == null;
      for (BatchContents batch : batches) {
        batch.close();
      }
      batches.clear();
      if (running) {
        failure = Status.of(StatusCode.CANCELLED, "stream " + id + " closed").toException();
      }
      arrived.signalAll();
    } finally {
      lock.unlock();
    }
    if (running) {
      connection.send(new Message.Close(id));
      // Stream ids are never reused, so batches still on their way find no stream and are freed on arrival.
      connection.forget(this);
    }
  }
}
