package io.thallus.spi;

import io.netty.buffer.ByteBuf;

/** Writes BATCH messages on the control connection, in call order. */
public interface ControlWriter {
  /**
   * Queues one BATCH message. {@code inline} (transport-defined bytes carried inside the frame, may be empty) is
   * released once written; {@code onWritten} runs when the frame is on the socket or failed to get there.
   */
  void writeBatch(BatchHeader header, ByteBuf inline, Runnable onWritten);

  /**
   * Memory for bytes a BATCH frame carries inline (an ipc frame, a small body), counted against the client's
   * memory budget until the frame is written. Waits up to the I/O deadline for room, then fails with
   * RESOURCE_EXHAUSTED naming the budget.
   */
  ByteBuf allocateInline(int capacity);
}
