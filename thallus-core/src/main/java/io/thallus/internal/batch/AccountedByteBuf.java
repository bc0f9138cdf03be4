package io.thallus.internal.batch;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.UnpooledDirectByteBuf;
import java.nio.ByteBuffer;
import org.apache.arrow.memory.AllocationReservation;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.OutOfMemoryException;

/**
 * A Netty buffer over Arrow memory of a client's allocator: bytes queued on the control connection (ipc frames,
 * inline bodies) count against that client's budget until Netty has written and released them. In a JVM that gives
 * Arrow no ByteBuffer views of its memory (started without java.nio opened, see {@link ArrowViews}), the bytes live
 * in a JDK direct buffer instead and the budget holds a reservation of the same size.
 */
public final class AccountedByteBuf extends UnpooledDirectByteBuf {
  /** What holds the bytes' place in the budget: the Arrow memory itself, or a reservation. */
  private final AutoCloseable accounting;

  private AccountedByteBuf(ByteBuffer memory, AutoCloseable accounting) {
    // Growth past the accounted capacity gets Netty's own memory, freed by Netty; the first memory stays put.
    super(ByteBufAllocator.DEFAULT, memory, Integer.MAX_VALUE - 8);
    this.accounting = accounting;
    writerIndex(0);
  }

  /** Throws OutOfMemoryException when the allocator's budget has no room for {@code capacity} bytes. */
  public static AccountedByteBuf allocate(BufferAllocator allocator, int capacity) {
    int size = Math.max(1, capacity);
    if (ArrowViews.granted()) {
      ArrowBuf memory = allocator.buffer(size);
      ByteBuffer view;
      try {
        view = ArrowViews.viewOrNull(memory, 0, size);
      } catch (RuntimeException e) {
        memory.close();
        throw e;
      }
      if (view != null) {
        return new AccountedByteBuf(view, memory);
      }
      memory.close();
    }
    AllocationReservation reservation = allocator.newReservation();
    if (!reservation.add((long) size)) {
      reservation.close();
      throw new OutOfMemoryException("no room for " + size + " bytes in " + allocator.getName());
    }
    return new AccountedByteBuf(ByteBuffer.allocateDirect(size), reservation);
  }

  @Override
  protected void deallocate() {
    super.deallocate();
    try {
      accounting.close();
    } catch (Exception e) {
      throw new IllegalStateException("releasing a frame's budget failed", e);
    }
  }
}
