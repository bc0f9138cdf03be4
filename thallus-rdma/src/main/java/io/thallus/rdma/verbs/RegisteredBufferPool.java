package io.thallus.rdma.verbs;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.spi.Deadline;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Page-aligned buffers registered once and lent out again and again, so the data path never registers memory
 * (registration pins pages and costs far more than the reads it would serve). Sizes are powers of two from
 * 64 KiB; the pool holds at most {@code limitBytes}, frees idle buffers to make room for other sizes, and
 * otherwise waits, until a deadline, for a buffer to come back.
 */
public final class RegisteredBufferPool implements AutoCloseable {
  private static final long PAGE = 4096;
  private static final long MIN_BUFFER = 64 * 1024;

  /** One registered buffer; {@link #close()} gives it back to the pool. */
  public final class Buffer implements AutoCloseable {
    private final Arena arena;
    private final MemorySegment memory;
    private final MemoryRegion region;
    private boolean lent;

    private Buffer(Arena arena, MemorySegment memory, MemoryRegion region) {
      this.arena = arena;
      this.memory = memory;
      this.region = region;
    }

    public MemorySegment memory() {
      return memory;
    }

    public long address() {
      return memory.address();
    }

    public long size() {
      return memory.byteSize();
    }

    public int localKey() {
      return region.localKey();
    }

    public int remoteKey() {
      return region.remoteKey();
    }

    @Override
    public void close() {
      giveBack(this);
    }

    private void free() {
      region.close();
      arena.close();
    }
  }

  private final ProtectionDomain domain;
  private final Set<MemoryRegion.Access> access;
  private final long limitBytes;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition returned = lock.newCondition();
  private final TreeMap<Long, ArrayDeque<Buffer>> idle = new TreeMap<>();
  private long totalBytes;
  private int lent;
  private int registrations;
  private boolean closed;

  public RegisteredBufferPool(ProtectionDomain domain, Set<MemoryRegion.Access> access, long limitBytes) {
    this.domain = domain;
    this.access = EnumSet.copyOf(access);
    this.limitBytes = limitBytes;
  }

  /** A registered buffer of at least {@code bytes}. */
  public Buffer borrow(long bytes, Deadline deadline) {
    long size = MIN_BUFFER;
    while (size < bytes) {
      size <<= 1;
    }
    if (size > limitBytes) {
      throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED,
          bytes + " bytes is more than the registered pool's limit of " + limitBytes);
    }
    lock.lock();
    try {
      while (true) {
        if (closed) {
          throw ThallusException.of(StatusCode.CANCELLED, "the registered buffer pool is closed");
        }
        ArrayDeque<Buffer> same = idle.get(size);
        if (same != null && !same.isEmpty()) {
          return lend(same.pop());
        }
        if (totalBytes + size <= limitBytes || freeIdle(totalBytes + size - limitBytes)) {
          return lend(register(size));
        }
        long left = deadline.remainingNanos();
        if (left == 0) {
          throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, "all " + lent + " registered buffers ("
              + totalBytes + " bytes, the limit) are in use");
        }
        returned.awaitNanos(Math.min(left, TimeUnit.MILLISECONDS.toNanos(200)));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw ThallusException.of(StatusCode.CANCELLED, "interrupted while waiting for a registered buffer");
    } finally {
      lock.unlock();
    }
  }

  private Buffer register(long size) {
    Arena arena = Arena.ofShared();
    try {
      MemorySegment memory = arena.allocate(size, PAGE);
      MemoryRegion region = domain.register(memory, access);
      totalBytes += size;
      registrations++;
      return new Buffer(arena, memory, region);
    } catch (RuntimeException e) {
      arena.close();
      throw e;
    }
  }

  private Buffer lend(Buffer buffer) {
    buffer.lent = true;
    lent++;
    return buffer;
  }

  private boolean freeIdle(long needed) {
    long idleBytes = 0;
    for (Map.Entry<Long, ArrayDeque<Buffer>> entry : idle.entrySet()) {
      idleBytes += entry.getKey() * entry.getValue().size();
    }
    if (idleBytes < needed) {
      return false;
    }
    long freed = 0;
    while (freed < needed) {
      Map.Entry<Long, ArrayDeque<Buffer>> largest = idle.lastEntry();
      Buffer buffer = largest.getValue().pop();
      if (largest.getValue().isEmpty()) {
        idle.remove(largest.getKey());
      }
      buffer.free();
      totalBytes -= buffer.size();
      freed += buffer.size();
    }
    return true;
  }

  private void giveBack(Buffer buffer) {
    lock.lock();
    try {
      if (!buffer.lent) {
        return;
      }
      buffer.lent = false;
      lent--;
      if (closed) {
        buffer.free();
        totalBytes -= buffer.size();
      } else {
        idle.computeIfAbsent(buffer.size(), s -> new ArrayDeque<>()).push(buffer);
        returned.signalAll();
      }
    } finally {
      lock.unlock();
    }
  }

  /** How many times the pool has registered memory: stays flat once the pool is warm. */
  public int registrations() {
    lock.lock();
    try {
      return registrations;
    } finally {
      lock.unlock();
    }
  }

  /** Deregisters and frees idle buffers now; lent ones when they come back. */
  @Override
  public void close() {
    lock.lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      for (ArrayDeque<Buffer> buffers : idle.values()) {
        for (Buffer buffer : buffers) {
          buffer.free();
          totalBytes -= buffer.size();
        }
      }
      idle.clear();
      returned.signalAll();
    } finally {
      lock.unlock();
    }
  }
}
