package io.thallus.spi;

import java.util.Map;

/**
 * A client's side of the write direction (ingest): where it places the bodies of the batches it sends, for the
 * server's {@link IngestFetcher} to take. Made by {@link ClientSession#ingestPlacer()} at a connection's first
 * ingest; the session closes it.
 */
public interface IngestPlacer extends BodyPlacer, AutoCloseable {
  /**
   * What the server's fetcher needs to reach this client's bodies, each key prefixed with the transport's name; sent
   * with every INGEST.
   */
  Map<String, String> parameters();

  @Override
  void close();
}
