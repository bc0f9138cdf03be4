package io.thallus.spi;

/**
 * One connection's use of a transport on the client. Core decodes every BATCH frame, rebuilds inline bodies itself,
 * keeps each stream's batches, END and errors in order, and tells the server what the consumer released; the session
 * only fetches out-of-line bodies.
 */
public interface ClientSession extends BodyFetcher, AutoCloseable {
  /**
   * Whether the server holds an out-of-line body until this client releases it (shm, cma, rdma), so core reports
   * releases; false where the body was handed over with its frame (tcp).
   */
  default boolean serverHoldsBodies() {
    return true;
  }

  /**
   * The write direction: where this client places the bodies of the batches it ingests, made at the first ingest
   * and closed with the session. Null (the default): every body travels inside its BATCH frame.
   */
  default IngestPlacer ingestPlacer() {
    return null;
  }

  @Override
  void close();
}
