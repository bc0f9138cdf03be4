package io.thallus.internal.batch;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.UnpooledDirectByteBuf;
import org.apache.arrow.memory.ArrowBuf;

/**
 * A Netty buffer over Arrow memory of a client's allocator: bytes queued on the control connection (ipc frames,
 * inline bodies) count against that client's budget until Netty has written and released them.
 */
public final class AccountedByteBuf extends UnpooledDirectByteBuf {
  private final ArrowBuf memory;

  private AccountedByteBuf(ArrowBuf memory, int capacity) {
    // Growth past the accounted capacity gets Netty's own memory, freed by Netty; the Arrow memory stays put.
    super(ByteBufAllocator.DEFAULT, memory.nioBuffer(0, capacity), Integer.MAX_VALUE - 8);
    this.memory = memory;
    writerIndex(0);
  }

  public static AccountedByteBuf allocate(org.apache.arrow.memory.BufferAllocator allocator, int capacity) {
    ArrowBuf memory = allocator.buffer(Math.max(1, capacity));
    try {
      return new AccountedByteBuf(memory, Math.max(1, capacity));
    } catch (RuntimeException e) {
      memory.close();
      throw e;
    }
  }

  @Override
  protected void deallocate() {
    super.deallocate();
    memory.close();
  }
}
