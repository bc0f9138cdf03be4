package io.thallus.spi;

import java.util.Map;

/**
 * One client connection's use of a transport on the server. Core packs each batch, carries small ones inside their
 * BATCH frame, writes every frame, and keeps the ledger of held batches; the session only places bodies.
 */
public interface ServerSession extends AutoCloseable {
  /** Parameters for WELCOME. */
  Map<String, String> welcomeParameters();

  /**
   * Places {@code body} where the client can fetch it, and says where that is. Returns null when the body does not
   * fit now but would once the client releases batches: core waits for a release (within its deadline and the
   * client's memory budget) and asks again. Called on a stream's thread, one placement of a connection at a time and
   * never on an event loop, so it may block until {@code deadline}. The body's buffers stay valid until the placement's
   * {@link PlacedBody#afterAnnounced} has returned.
   */
  PlacedBody place(PackedBody body, Deadline deadline);

  /** The connection is over; core has closed every placement before. Idempotent. */
  @Override
  void close();
}
