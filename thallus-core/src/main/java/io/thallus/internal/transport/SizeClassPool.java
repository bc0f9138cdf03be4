package io.thallus.internal.transport;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.spi.Deadline;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Buffers that are expensive to make (fresh pages to fault in, memory to register) and so are kept and lent again.
 * Sizes are powers of two from 64 KiB. The pool holds at most {@code limitBytes}; to make a size it does not have
 * it frees idle buffers of other sizes, largest first, and otherwise waits, until a deadline, for one to come
 * back. Closing frees idle buffers at once and lent ones when they return.
 */
public abstract class SizeClassPool<B> implements AutoCloseable {
  public static final long MIN_SIZE = 64 * 1024;

  private final long limitBytes;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition returned = lock.newCondition();
  private final TreeMap<Long, ArrayDeque<B>> idle = new TreeMap<>();
  private long totalBytes;
  private long lentBytes;
  private int lent;
  private int allocations;
  private boolean closed;

  protected SizeClassPool(long limitBytes) {
    this.limitBytes = limitBytes;
  }

  /** Makes a buffer of exactly {@code size} bytes. */
  protected abstract B allocate(long size);

  /** Frees a buffer for good. */
  protected abstract void free(B buffer);

  protected abstract long sizeOf(B buffer);

  /** The error when every byte the pool may hold is lent out. */
  protected abstract ThallusException exhausted(int lentBuffers, long lentBytes, long limit);

  /** The error for a request the pool could never serve. */
  protected abstract ThallusException tooLarge(long bytes, long limit);

  public static long sizeFor(long bytes) {
    long size = MIN_SIZE;
    while (size < bytes) {
      size <<= 1;
    }
    return size;
  }

  /** A buffer of at least {@code bytes}, reused if one is idle. */
  protected final B take(long bytes, Deadline deadline) {
    return take(bytes, deadline, false);
  }

  /** As {@link #take(long, Deadline)} without waiting: null when every byte the pool may hold is lent out. */
  protected final B tryTake(long bytes) {
    return take(bytes, null, true);
  }

  private B take(long bytes, Deadline deadline, boolean orNull) {
    long size = sizeFor(bytes);
    if (size > limitBytes) {
      throw tooLarge(bytes, limitBytes);
    }
    lock.lock();
    try {
      while (true) {
        if (closed) {
          throw ThallusException.of(StatusCode.CANCELLED, "the buffer pool is closed");
        }
        ArrayDeque<B> same = idle.get(size);
        B buffer = same == null ? null : same.poll();
        if (buffer == null && (totalBytes + size <= limitBytes || freeIdle(totalBytes + size - limitBytes))) {
          buffer = allocate(size);
          totalBytes += size;
          allocations++;
        }
        if (buffer != null) {
          lent++;
          lentBytes += size;
          return buffer;
        }
        if (orNull) {
          return null;
        }
        long left = deadline.remainingNanos();
        if (left == 0) {
          throw exhausted(lent, lentBytes, limitBytes);
        }
        returned.awaitNanos(Math.min(left, TimeUnit.MILLISECONDS.toNanos(200)));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw ThallusException.of(StatusCode.CANCELLED, "interrupted while waiting for a buffer");
    } finally {
      lock.unlock();
    }
  }

  /** Frees idle buffers, largest first, until {@code needed} bytes are freed; false if that is impossible. */
  private boolean freeIdle(long needed) {
    long idleBytes = 0;
    for (Map.Entry<Long, ArrayDeque<B>> entry : idle.entrySet()) {
      idleBytes += entry.getKey() * entry.getValue().size();
    }
    if (idleBytes < needed) {
      return false;
    }
    long freed = 0;
    while (freed < needed) {
      Map.Entry<Long, ArrayDeque<B>> largest = idle.lastEntry();
      B buffer = largest.getValue().pop();
      if (largest.getValue().isEmpty()) {
        idle.remove(largest.getKey());
      }
      free(buffer);
      totalBytes -= largest.getKey();
      freed += largest.getKey();
    }
    return true;
  }

  /** Takes back a lent buffer. */
  protected final void giveBack(B buffer) {
    long size = sizeOf(buffer);
    lock.lock();
    try {
      lent--;
      lentBytes -= size;
      if (closed) {
        free(buffer);
        totalBytes -= size;
      } else {
        idle.computeIfAbsent(size, s -> new ArrayDeque<>()).push(buffer);
        returned.signalAll();
      }
    } finally {
      lock.unlock();
    }
  }

  /** How many buffers the pool has made: flat once it is warm. */
  public final int allocations() {
    lock.lock();
    try {
      return allocations;
    } finally {
      lock.unlock();
    }
  }

  @Override
  public final void close() {
    lock.lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      for (ArrayDeque<B> buffers : idle.values()) {
        for (B buffer : buffers) {
          free(buffer);
          totalBytes -= sizeOf(buffer);
        }
      }
      idle.clear();
      returned.signalAll();
    } finally {
      lock.unlock();
    }
  }
}
