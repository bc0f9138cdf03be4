package io.thallus.spi;

/**
 * Puts batch bodies where the peer can take them from: the server's side of the read direction
 * ({@link ServerSession}) and the client's side of the write direction ({@link IngestPlacer}). Core packs each batch,
 * carries small ones inside their frames, keeps the ledger of placed bodies and writes every frame.
 */
public interface BodyPlacer {
  /**
   * Places {@code body} where the peer can fetch it, and says where that is. Returns null when the body does not
   * fit now but would once the peer releases batches: core waits for a release (within its deadline and the
   * memory budget) and asks again. Called one placement at a time per connection and never on an event loop, so it
   * may block until {@code deadline}. The body's buffers stay valid until the placement's
   * {@link PlacedBody#afterAnnounced} has returned.
   */
  PlacedBody place(PackedBody body, Deadline deadline);
}
