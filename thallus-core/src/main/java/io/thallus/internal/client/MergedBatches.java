package io.thallus.internal.client;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.spi.BatchContents;
import io.thallus.spi.Deadline;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The parallel streams of one split query read as one: a virtual thread per stream takes its batches (granting its
 * credits, so the server keeps every stream going) into one queue of at most a batch per stream, which the consumer
 * takes in arrival order. A stream the server sent the whole answer on (a query it did not split: ORDER BY, say)
 * keeps its order. The first failure of any stream stops the others and is thrown; closing stops them all.
 *
 * <p>The bound holds under concurrency: a stream's thread reserves its place in the queue before it waits for its
 * next batch, so batches queued and places reserved together never exceed one per stream.
 */
public final class MergedBatches implements BatchSource {
  private final List<BatchSource> parts;
  private final Duration timeout;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  // Guarded by lock.
  private final ArrayDeque<BatchContents> arrived = new ArrayDeque<>();
  private int partsEnded;
  /** Places in the queue that streams' threads hold while they wait for their next batch. */
  private int reserved;
  private ThallusException failure;
  private boolean closed;

  public MergedBatches(List<? extends BatchSource> parts, Duration timeout) {
    this.parts = List.copyOf(parts);
    this.timeout = timeout;
    for (BatchSource part : this.parts) {
      Thread.ofVirtual().name("thallus-merge-" + name(part)).start(() -> drain(part));
    }
  }

  private static String name(BatchSource part) {
    return part instanceof StreamState stream ? Integer.toString(stream.id()) : part.toString();
  }

  /** Moves one stream's batches into the queue, each into a place reserved first, until the stream ends or fails. */
  private void drain(BatchSource part) {
    try {
      while (true) {
        if (!reserveRoom()) {
          return;
        }
        BatchContents batch;
        try {
          batch = part.take();
        } catch (RuntimeException | Error e) {
          giveBackRoom();
          throw e;
        }
        lock.lock();
        try {
          reserved--;
          if (batch == null) {
            partsEnded++;
            changed.signalAll();
            return;
          }
          if (closed || failure != null) {
            batch.close();
            return;
          }
          arrived.add(batch);
          changed.signalAll();
        } finally {
          lock.unlock();
        }
      }
    } catch (ThallusException e) {
      fail(e);
    } catch (RuntimeException | Error e) {
      // An Error too ends the merge at once, instead of leaving the consumer to wait out its timeout.
      fail(ThallusException.of(StatusCode.INTERNAL, "reading stream " + name(part) + " failed: " + e, e));
    }
  }

  /**
   * Waits while the batches queued and the places reserved fill the queue (a batch per stream), then reserves one;
   * false, reserving nothing, once the merge is over (closed or failed).
   */
  private boolean reserveRoom() {
    lock.lock();
    try {
      while (arrived.size() + reserved >= parts.size() && !closed && failure == null) {
        // The consumer takes at its own pace, with no deadline of its own here: look again now and then.
        changed.await(100, TimeUnit.MILLISECONDS);
      }
      if (closed || failure != null) {
        return false;
      }
      reserved++;
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } finally {
      lock.unlock();
    }
  }

  private void giveBackRoom() {
    lock.lock();
    try {
      reserved--;
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /** Batches queued and not yet taken. */
  int queued() {
    lock.lock();
    try {
      return arrived.size();
    } finally {
      lock.unlock();
    }
  }

  private void fail(ThallusException e) {
    boolean first;
    lock.lock();
    try {
      first = failure == null && !closed;
      if (first) {
        failure = e;
      }
      changed.signalAll();
    } finally {
      lock.unlock();
    }
    if (first) {
      // The result is incomplete: its other streams stop.
      parts.forEach(BatchSource::cancel);
    }
  }

  @Override
  public String transport() {
    return parts.get(0).transport();
  }

  @Override
  public BatchContents take() {
    Deadline deadline = Deadline.after(timeout);
    lock.lock();
    try {
      while (arrived.isEmpty() && failure == null && partsEnded < parts.size()) {
        if (closed) {
          throw ThallusException.of(StatusCode.FAILED_PRECONDITION, "the stream is closed");
        }
        if (deadline.isExpired()) {
          throw deadline.expired("batch data on " + parts.size() + " parallel streams");
        }
        changed.await(Math.min(deadline.remainingMillis(), 1000), TimeUnit.MILLISECONDS);
      }
      if (failure != null) {
        throw failure;
      }
      BatchContents batch = arrived.poll();
      changed.signalAll();
      return batch;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw ThallusException.of(StatusCode.CANCELLED, "interrupted while waiting for a batch");
    } finally {
      lock.unlock();
    }
  }

  /** The sums of the streams' ends (the longest server time), once all have ended. */
  @Override
  public StreamState.End end() {
    long rows = 0;
    long batches = 0;
    long bytes = 0;
    long nanos = 0;
    long cpuNanos = 0;
    for (BatchSource part : parts) {
      StreamState.End end = part.end();
      if (end == null) {
        return null;
      }
      rows += end.rows();
      batches += end.batches();
      bytes += end.bytes();
      nanos = Math.max(nanos, end.serverNanos());
      cpuNanos += end.serverCpuNanos();
    }
    return new StreamState.End(rows, batches, bytes, nanos, cpuNanos);
  }

  @Override
  public void cancel() {
    parts.forEach(BatchSource::cancel);
  }

  @Override
  public void close() {
    lock.lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      arrived.forEach(BatchContents::close);
      arrived.clear();
      changed.signalAll();
    } finally {
      lock.unlock();
    }
    // A stream's take() that waits now ends with "closed", and its thread with it.
    parts.forEach(BatchSource::close);
  }
}
