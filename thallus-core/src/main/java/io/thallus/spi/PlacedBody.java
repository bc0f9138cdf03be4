package io.thallus.spi;

import java.util.List;

/**
 * A body a transport has placed where its client can fetch it: the layout the BATCH frame announces, and the place
 * itself, which core's ledger of held batches frees ({@link #close}) when the client releases the batch or the
 * connection ends.
 */
public interface PlacedBody extends AutoCloseable {
  /** The layout in this transport's terms: each descriptor says where the client finds one buffer. */
  List<BatchPart> parts();

  /**
   * Runs right after the BATCH frame is queued, in the order bodies were placed on this connection: a transport whose
   * bodies follow their frames on a stream of their own (tcp) sends the body here. May block until {@code deadline}.
   */
  default void afterAnnounced(Deadline deadline) {}

  /**
   * Whether the client reads the body from the server after the frame (shm, cma, rdma), so it is held until the
   * client releases it; false when the body has been handed over by the time {@link #afterAnnounced} returns.
   */
  default boolean heldUntilReleased() {
    return true;
  }

  /** Frees the place. Called once, on any thread. */
  @Override
  void close();
}
