package io.thallus.internal.transport;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.spi.Deadline;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.ForeignAllocation;

/**
 * Page-aligned, pre-faulted receive buffers that are reused: writing fresh pages costs several times more than
 * writing pages already touched. A buffer is lent to one batch at a time as an {@link ArrowBuf} accounted by the
 * client's allocator; when the batch's last buffer is released it comes back here.
 */
public final class ReceivePool extends SizeClassPool<ReceivePool.Region> {
  static final long PAGE = 4096;

  public ReceivePool(long limitBytes) {
    super(limitBytes);
  }

  /** A buffer of at least {@code bytes}, lent as one ArrowBuf of exactly {@code bytes}. */
  public ArrowBuf borrow(long bytes, BufferAllocator allocator, Deadline deadline) {
    Region region = take(bytes, deadline);
    try {
      return allocator.wrapForeignAllocation(new Loan(region, bytes));
    } catch (RuntimeException e) {
      giveBack(region);
      throw e;
    }
  }

  /** The bytes of a lent buffer as a direct ByteBuffer for socket reads. */
  public static ByteBuffer byteBuffer(ArrowBuf buffer, long length) {
    return buffer.nioBuffer(0, Math.toIntExact(length));
  }

  @Override
  protected Region allocate(long size) {
    Arena arena = Arena.ofShared();
    try {
      // Arena memory is zeroed on allocation, which faults every page in now rather than during a read.
      return new Region(size, arena, arena.allocate(size, PAGE));
    } catch (RuntimeException | OutOfMemoryError e) {
      arena.close();
      throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, "cannot allocate a receive buffer of " + size
          + " bytes: " + e.getMessage(), e);
    }
  }

  @Override
  protected void free(Region region) {
    region.arena().close();
  }

  @Override
  protected long sizeOf(Region region) {
    return region.size();
  }

  @Override
  protected ThallusException exhausted(int lentBuffers, long lentBytes, long limit) {
    return ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, "the receive pool is full: " + lentBuffers
        + " received batches (" + lentBytes + " bytes) are still held by the consumer, the limit is " + limit
        + " bytes; close batches after use or raise receivePoolBytes");
  }

  @Override
  protected ThallusException tooLarge(long bytes, long limit) {
    return ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, "a batch body of " + bytes
        + " bytes is larger than the receive pool's limit of " + limit + " bytes");
  }

  /** One page-aligned block of native memory, with its own arena so it can be freed alone. */
  record Region(long size, Arena arena, MemorySegment segment) {}

  /** A region lent to one batch: when Arrow releases the last reference, the region comes back. */
  private final class Loan extends ForeignAllocation {
    private final Region region;

    Loan(Region region, long bytes) {
      super(bytes, region.segment().address());
      this.region = region;
    }

    @Override
    protected void release0() {
      giveBack(region);
    }
  }
}
