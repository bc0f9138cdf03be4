package io.thallus.rdma.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.ControlWriter;

/**
 * A control writer with no connection behind it, for tests that drive a server session directly: each BATCH goes
 * straight to {@code onBatch}; inline bytes come from plain Netty memory, since no client budget applies here.
 */
public final class DirectControlWriter implements ControlWriter {
  /** What the test does with one BATCH; it releases {@code inline} and runs {@code onWritten}. */
  public interface OnBatch {
    void accept(BatchHeader header, ByteBuf inline, Runnable onWritten);
  }

  private final OnBatch onBatch;

  public DirectControlWriter(OnBatch onBatch) {
    this.onBatch = onBatch;
  }

  @Override
  public void writeBatch(BatchHeader header, ByteBuf inline, Runnable onWritten) {
    onBatch.accept(header, inline, onWritten);
  }

  @Override
  public ByteBuf allocateInline(int capacity) {
    return Unpooled.directBuffer(capacity);
  }
}
