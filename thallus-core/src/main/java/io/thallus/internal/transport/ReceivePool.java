package io.thallus.internal.transport;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.spi.Deadline;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * Page-aligned, pre-faulted receive buffers that are reused: writing fresh pages costs several times more than
 * writing pages already touched. A buffer is lent to one body at a time; core accounts it to the client's allocator
 * while the batch lives, and gives it back when the batch's last buffer is released.
 */
public final class ReceivePool extends SizeClassPool<ReceivePool.Region> {
  static final long PAGE = 4096;

  public ReceivePool(long limitBytes) {
    super(limitBytes);
  }

  /** A buffer of at least {@code bytes}, for one body of exactly {@code bytes}. */
  public Lease lend(long bytes, Deadline deadline) {
    return new Lease(take(bytes, deadline), bytes);
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

  /** A region lent to one body; it comes back when released (once; later calls do nothing). */
  public final class Lease {
    private final Region region;
    private final long bytes;
    private final java.util.concurrent.atomic.AtomicBoolean returned = new java.util.concurrent.atomic.AtomicBoolean();

    private Lease(Region region, long bytes) {
      this.region = region;
      this.bytes = bytes;
    }

    public long address() {
      return region.segment().address();
    }

    public long bytes() {
      return bytes;
    }

    /** The body's bytes as a direct ByteBuffer, for socket reads. */
    public ByteBuffer byteBuffer() {
      return region.segment().asSlice(0, bytes).asByteBuffer();
    }

    public void release() {
      if (returned.compareAndSet(false, true)) {
        giveBack(region);
      }
    }
  }
}
