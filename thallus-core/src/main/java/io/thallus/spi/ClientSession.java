package io.thallus.spi;

import io.netty.buffer.ByteBuf;
import io.thallus.ThallusException;

/** One connection's use of a transport on the client. */
public interface ClientSession extends AutoCloseable {
  /** Where received batches go. Called from the control thread or a transport's own thread, in batch order. */
  interface BatchSink {
    /** A whole batch arrived; the sink owns {@code contents} from here on. */
    void deliver(BatchHeader header, BatchContents contents);

    /** The transport cannot go on: every stream on this connection fails with {@code error}. */
    void fail(ThallusException error);

    /**
     * The stream has releases waiting in {@link ClientSession#takeReleases}. They ride on the stream's next credit
     * grant; a stream that will grant no more (ended, closed) gets them sent on their own. Any thread may call it.
     */
    default void releasePending(int streamId) {}
  }

  /**
   * Called on the control thread for every BATCH message, in arrival order. Must not block. {@code inline} is
   * only valid during the call (retain it to keep it). Hands the batch to {@code sink} once its body is in.
   */
  void onBatch(BatchHeader header, ByteBuf inline, BatchSink sink);

  /**
   * Runs {@code action} once every batch handed to {@link #onBatch} before this call has been delivered: END and
   * errors of a stream must not overtake its batches. Transports that deliver during {@code onBatch} run it now.
   */
  default void afterPendingBatches(Runnable action) {
    action.run();
  }

  /**
   * The ids of the stream's batches whose buffers the consumer has released since the last call, for transports
   * that read the server's memory (shm, rdma): the server may reuse it once told (piggybacked on NEXT).
   */
  default long[] takeReleases(int streamId) {
    return NO_RELEASES;
  }

  long[] NO_RELEASES = new long[0];

  @Override
  void close();
}
