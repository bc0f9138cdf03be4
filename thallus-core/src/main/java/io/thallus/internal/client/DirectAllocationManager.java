package io.thallus.internal.client;

import org.apache.arrow.memory.AllocationManager;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.ReferenceManager;
import org.apache.arrow.memory.util.MemoryUtil;

/**
 * Arrow memory from the C heap, one allocation per buffer, for a JVM where Arrow's default (Netty's pooled
 * allocator) cannot work: on JDK 24 and later Netty declines {@code sun.misc.Unsafe} unless the JVM was started with
 * {@code --sun-misc-unsafe-memory-access=allow}, and Arrow's Netty allocation manager then fails on its first
 * allocation. Tools that load a JDBC driver rarely let their users set JVM flags.
 */
public final class DirectAllocationManager extends AllocationManager {
  /** One byte that lives as long as the JVM: the address of every empty buffer. */
  private static final long EMPTY_ADDRESS = MemoryUtil.allocateMemory(1);
  private static final ArrowBuf EMPTY = new ArrowBuf(ReferenceManager.NO_OP, null, 0, EMPTY_ADDRESS);

  public static final AllocationManager.Factory FACTORY = new AllocationManager.Factory() {
    @Override
    public AllocationManager create(BufferAllocator accountingAllocator, long size) {
      return new DirectAllocationManager(accountingAllocator, size);
    }

    @Override
    public ArrowBuf empty() {
      return EMPTY;
    }
  };

  private final long address;
  private final long size;

  private DirectAllocationManager(BufferAllocator accountingAllocator, long size) {
    super(accountingAllocator);
    this.address = MemoryUtil.allocateMemory(size);
    this.size = size;
  }

  /** Whether Arrow's default allocation manager works in this JVM (Netty may use sun.misc.Unsafe). */
  public static boolean defaultWorks() {
    return io.netty.util.internal.PlatformDependent.hasUnsafe();
  }

  @Override
  public long getSize() {
    return size;
  }

  @Override
  protected long memoryAddress() {
    return address;
  }

  @Override
  protected void release0() {
    MemoryUtil.freeMemory(address);
  }
}
