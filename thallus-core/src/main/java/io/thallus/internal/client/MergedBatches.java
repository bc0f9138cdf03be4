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
 */
public final class MergedBatches implements BatchSource {
  private final List<StreamState> parts;
  private final Duration timeout;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  // Guarded by lock.
  private final ArrayDeque<BatchContents> arrived = new ArrayDeque<>();
  private int partsEnded;
  private ThallusException failure;
  private boolean closed;

  public MergedBatches(List<StreamState> parts, Duration timeout) {
    this.parts = List.copyOf(parts);
    this.timeout = timeout;
    for (StreamState part : this.parts) {
      Thread.ofVirtual().name("thallus-merge-" + part.id()).start(() -> drain(part));
    }
  }

  /** Moves one stream's batches into the queue, each once there is room for it, until the stream ends or fails. */
  private void drain(StreamState part) {
    try {
      while (true) {
        if (!awaitRoom()) {
          return;
        }
        BatchContents batch = part.take();
        lock.lock();
        try {
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
    } catch (RuntimeException e) {
      fail(ThallusException.of(StatusCode.INTERNAL, "reading stream " + part.id() + " failed: " + e, e));
    }
  }

  /** Waits while the queue holds a batch per stream; false once the merge is over (closed or failed). */
  private boolean awaitRoom() {
    lock.lock();
    try {
      while (arrived.size() >= parts.size() && !closed && failure == null) {
        // The consumer takes at its own pace, with no deadline of its own here: look again now and then.
        changed.await(100, TimeUnit.MILLISECONDS);
      }
      return !closed && failure == null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
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
      parts.forEach(StreamState::cancel);
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
    for (StreamState part : parts) {
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
    parts.forEach(StreamState::cancel);
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
    parts.forEach(StreamState::close);
  }
}
