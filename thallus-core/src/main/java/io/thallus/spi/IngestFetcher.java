package io.thallus.spi;

/**
 * The server's side of the write direction (ingest): takes the bodies of the batches a client sends, from wherever
 * the client's {@link IngestPlacer} put them, as {@link BodyFetcher#fetch} says (on arrival, in order). Made by
 * {@link ServerSession#ingestFetcher} at a connection's first ingest; core closes it with the connection.
 */
public interface IngestFetcher extends BodyFetcher, AutoCloseable {
  /**
   * Whether the client keeps each body until the server releases it (shm, cma), so core reports releases; false
   * where the body was handed over with its frame (tcp).
   */
  default boolean clientHoldsBodies() {
    return true;
  }

  @Override
  void close();
}
