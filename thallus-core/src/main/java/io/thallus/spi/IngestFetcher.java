package io.thallus.spi;

/**
 * The server's side of the write direction (ingest): takes the bodies of the batches a client sends, from wherever
 * the client's {@link IngestPlacer} put them. Made by {@link ServerSession#ingestFetcher} at a connection's first
 * ingest; core closes it with the connection.
 */
public interface IngestFetcher extends AutoCloseable {
  /**
   * Takes the body {@code header}'s descriptors name into this process, blocking until it is here or
   * {@code deadline} passes. Called on the ingest's thread, never on an event loop, for one body at a time per
   * connection and in the order of the connection's out-of-line BATCH frames.
   */
  FetchedBody fetch(BatchHeader header, Deadline deadline);

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
