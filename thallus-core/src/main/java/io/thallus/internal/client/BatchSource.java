package io.thallus.internal.client;

import io.thallus.spi.BatchContents;

/** Where a {@link io.thallus.ThallusStream} takes its batches: one stream of the server, or several merged. */
public interface BatchSource extends AutoCloseable {
  /** The transport the batches travel on. */
  String transport();

  /** The next batch (the caller owns it), or null once the result has ended. Throws the result's failure. */
  BatchContents take();

  /** What the server said at the end, once every batch has arrived; null before. */
  StreamState.End end();

  /** Asks the server to stop; the consumer then sees CANCELLED (batches already here are still delivered). */
  void cancel();

  /** Frees every batch not taken and stops the server if it still runs. Idempotent. */
  @Override
  void close();
}
