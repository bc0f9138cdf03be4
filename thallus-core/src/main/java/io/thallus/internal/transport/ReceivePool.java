package io.thallus.internal.transport;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.spi.Deadline;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.ForeignAllocation;

/**
 * Page-aligned, pre-faulted receive buffers that are reused: writing fresh pages costs several times more than
 * writing pages already touched. A buffer is lent to one batch at a time as an {@link ArrowBuf} accounted by the
 * client's allocator; when the batch's last buffer is released it comes back here. Sizes are powers of two from
 * 64 KiB; the pool holds at most {@code limitBytes}, frees idle buffers to make room, and otherwise makes the
 * reader wait (with a deadline) for the consumer to release a batch.
 */
public final class ReceivePool implements AutoCloseable {
  static final long PAGE = 4096;
  static final long MIN_REGION = 64 * 1024;

  private final long limitBytes;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition returned = lock.newCondition();
  private final TreeMap<Long, ArrayDeque<Region>> idle = new TreeMap<>();
  private long totalBytes;
  private long lentBytes;
  private int lent;
  private boolean closed;

  public ReceivePool(long limitBytes) {
    this.limitBytes = limitBytes;
  }

  /** A buffer region of at least {@code bytes}, lent as one ArrowBuf of exactly {@code bytes}. */
  public ArrowBuf borrow(long bytes, BufferAllocator allocator, Deadline deadline) {
    long size = sizeFor(bytes);
    if (size > limitBytes) {
      throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, "a batch body of " + bytes
          + " bytes is larger than the receive pool's limit of " + limitBytes + " bytes");
    }
    Region region = take(size, deadline);
    try {
      return allocator.wrapForeignAllocation(new Loan(region, bytes));
    } catch (RuntimeException e) {
      giveBack(region);
      throw e;
    }
  }

  static long sizeFor(long bytes) {
    long size = MIN_REGION;
    while (size < bytes) {
      size <<= 1;
    }
    return size;
  }

  private Region take(long size, Deadline deadline) {
    lock.lock();
    try {
      while (true) {
        if (closed) {
          throw ThallusException.of(StatusCode.CANCELLED, "the receive pool is closed");
        }
        ArrayDeque<Region> same = idle.get(size);
        if (same != null && !same.isEmpty()) {
          Region region = same.pop();
          lend(region);
          return region;
        }
        if (totalBytes + size <= limitBytes || freeIdle(totalBytes + size - limitBytes)) {
          Region region = Region.allocate(size);
          totalBytes += size;
          lend(region);
          return region;
        }
        long left = deadline.remainingNanos();
        if (left == 0) {
          throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, "the receive pool is full: " + lent
              + " received batches (" + lentBytes + " bytes) are still held by the consumer, the limit is "
              + limitBytes + " bytes; close batches after use or raise receivePoolBytes");
        }
        returned.awaitNanos(Math.min(left, TimeUnit.MILLISECONDS.toNanos(200)));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw ThallusException.of(StatusCode.CANCELLED, "interrupted while waiting for a receive buffer");
    } finally {
      lock.unlock();
    }
  }

  private void lend(Region region) {
    lent++;
    lentBytes += region.size;
  }

  /** Frees idle regions, largest first, until {@code needed} bytes are freed; false if that is impossible. */
  private boolean freeIdle(long needed) {
    long idleBytes = 0;
    for (Map.Entry<Long, ArrayDeque<Region>> entry : idle.entrySet()) {
      idleBytes += entry.getKey() * entry.getValue().size();
    }
    if (idleBytes < needed) {
      return false;
    }
    long freed = 0;
    while (freed < needed) {
      Map.Entry<Long, ArrayDeque<Region>> largest = idle.lastEntry();
      Region region = largest.getValue().pop();
      if (largest.getValue().isEmpty()) {
        idle.remove(largest.getKey());
      }
      region.free();
      totalBytes -= region.size;
      freed += region.size;
    }
    return true;
  }

  private void giveBack(Region region) {
    lock.lock();
    try {
      lent--;
      lentBytes -= region.size;
      if (closed) {
        region.free();
        totalBytes -= region.size;
      } else {
        idle.computeIfAbsent(region.size, s -> new ArrayDeque<>()).push(region);
        returned.signalAll();
      }
    } finally {
      lock.unlock();
    }
  }

  /** Frees idle regions now; regions still lent are freed when their batch is released. */
  @Override
  public void close() {
    lock.lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      for (ArrayDeque<Region> regions : idle.values()) {
        for (Region region : regions) {
          region.free();
          totalBytes -= region.size;
        }
      }
      idle.clear();
      returned.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /** One page-aligned block of native memory, with its own arena so it can be freed alone. */
  private static final class Region {
    final long size;
    final Arena arena;
    final MemorySegment segment;

    private Region(long size, Arena arena, MemorySegment segment) {
      this.size = size;
      this.arena = arena;
      this.segment = segment;
    }

    static Region allocate(long size) {
      Arena arena = Arena.ofShared();
      try {
        MemorySegment segment = arena.allocate(size, PAGE);
        // Arena memory is zeroed on allocation, which faults every page in now rather than during a read.
        return new Region(size, arena, segment);
      } catch (RuntimeException | OutOfMemoryError e) {
        arena.close();
        throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, "cannot allocate a receive buffer of "
            + size + " bytes: " + e.getMessage(), e);
      }
    }

    void free() {
      arena.close();
    }
  }

  /** A region lent to one batch: when Arrow releases the last reference, the region comes back. */
  private final class Loan extends ForeignAllocation {
    private final Region region;

    Loan(Region region, long bytes) {
      super(bytes, region.segment.address());
      this.region = region;
    }

    @Override
    protected void release0() {
      giveBack(region);
    }
  }

  /** The bytes of a lent buffer as a direct ByteBuffer for socket reads. */
  public static ByteBuffer byteBuffer(ArrowBuf buffer, long length) {
    return buffer.nioBuffer(0, Math.toIntExact(length));
  }
}
