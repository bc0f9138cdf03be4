package io.thallus.rdma.verbs;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.internal.transport.SizeClassPool;
import io.thallus.spi.Deadline;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.Set;

/**
 * Page-aligned buffers registered once and lent out again and again, so the data path never registers memory
 * (registration pins pages and costs far more than the reads it would serve). Sizes, limits and waiting are
 * {@link SizeClassPool}'s.
 */
public final class RegisteredBufferPool extends SizeClassPool<RegisteredBufferPool.Buffer> {
  private static final long PAGE = 4096;

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

    /** The buffer's registration, to bind memory windows to. */
    public MemoryRegion region() {
      return region;
    }

    /** Gives the buffer back; a second close does nothing. */
    @Override
    public void close() {
      synchronized (this) {
        if (!lent) {
          return;
        }
        lent = false;
      }
      giveBack(this);
    }
  }

  private final ProtectionDomain domain;
  private final Set<MemoryRegion.Access> access;

  public RegisteredBufferPool(ProtectionDomain domain, Set<MemoryRegion.Access> access, long limitBytes) {
    super(limitBytes);
    this.domain = domain;
    this.access = EnumSet.copyOf(access);
  }

  /** A registered buffer of at least {@code bytes}. */
  public Buffer borrow(long bytes, Deadline deadline) {
    Buffer buffer = take(bytes, deadline);
    synchronized (buffer) {
      buffer.lent = true;
    }
    return buffer;
  }

  /** A registered buffer of at least {@code bytes}, or null when the pool has none free now. */
  public Buffer tryBorrow(long bytes) {
    Buffer buffer = tryTake(bytes);
    if (buffer != null) {
      synchronized (buffer) {
        buffer.lent = true;
      }
    }
    return buffer;
  }

  /** How many times the pool has registered memory: stays flat once the pool is warm. */
  public int registrations() {
    return allocations();
  }

  @Override
  protected Buffer allocate(long size) {
    Arena arena = Arena.ofShared();
    try {
      MemorySegment memory = arena.allocate(size, PAGE);
      return new Buffer(arena, memory, domain.register(memory, access));
    } catch (RuntimeException e) {
      arena.close();
      throw e;
    }
  }

  @Override
  protected void free(Buffer buffer) {
    buffer.region.close();
    buffer.arena.close();
  }

  @Override
  protected long sizeOf(Buffer buffer) {
    return buffer.size();
  }

  @Override
  protected ThallusException exhausted(int lentBuffers, long lentBytes, long limit) {
    return ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, "all " + lentBuffers + " registered buffers ("
        + lentBytes + " bytes of the " + limit + " allowed) are in use");
  }

  @Override
  protected ThallusException tooLarge(long bytes, long limit) {
    return ThallusException.of(StatusCode.RESOURCE_EXHAUSTED,
        bytes + " bytes is more than the registered pool's limit of " + limit);
  }
}
