package io.thallus.spi;

import java.util.Map;

/**
 * One client connection's use of a transport on the server. Core packs each batch, carries small ones inside their
 * BATCH frame, writes every frame, and keeps the ledger of held batches; the session only places bodies.
 */
public interface ServerSession extends BodyPlacer, AutoCloseable {
  /** Parameters for WELCOME. */
  Map<String, String> welcomeParameters();

  /**
   * The write direction: how this server takes the bodies a client's {@link IngestPlacer} placed, from the client's
   * {@code parameters} (its placer's). Called once per connection, at its first ingest whose batches do not all
   * travel inside their frames. A transport without a write direction of its own keeps the default: its clients send
   * every body inside its frame.
   */
  default IngestFetcher ingestFetcher(Map<String, String> parameters) {
    throw io.thallus.ThallusException.of(io.thallus.StatusCode.UNIMPLEMENTED,
        "this transport takes ingested batches only inside their frames");
  }

  /**
   * Gives back at once the memory this session keeps for no body now (empty buffers it would reuse), because one of
   * its connection's streams waits for room in its budget: memory kept for reuse must not stall the stream it is kept
   * for. Returns the bytes given back; a transport that keeps nothing idle keeps the default.
   */
  default long releaseUnused() {
    return 0;
  }

  /** The connection is over; core has closed every placement before. Idempotent. */
  @Override
  void close();
}
