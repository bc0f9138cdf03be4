package io.thallus.internal.server;

import io.netty.buffer.ByteBuf;
import io.netty.channel.MessageSizeEstimator;
import io.thallus.internal.protocol.Message;

/**
 * Sizes messages queued on a control connection before they are encoded, so a BATCH with a large inline body makes
 * the channel unwritable at once (Netty's default counts an unknown message as 8 bytes).
 */
public final class BatchSizeEstimator implements MessageSizeEstimator {
  public static final BatchSizeEstimator INSTANCE = new BatchSizeEstimator();
  private static final Handle HANDLE = message -> switch (message) {
    case Message.Batch batch -> 64 + batch.inline().readableBytes();
    case ByteBuf bytes -> bytes.readableBytes();
    default -> 64;
  };

  private BatchSizeEstimator() {}

  @Override
  public Handle newHandle() {
    return HANDLE;
  }
}
