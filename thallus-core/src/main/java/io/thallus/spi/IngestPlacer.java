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

  /**
   * A placer with fixed {@code parameters} that places with {@code placer} and holds nothing of its own to close
   * (what it places into belongs to the session that made it).
   */
  static IngestPlacer of(Map<String, String> parameters, BodyPlacer placer) {
    Map<String, String> fixed = Map.copyOf(parameters);
    return new IngestPlacer() {
      @Override
      public Map<String, String> parameters() {
        return fixed;
      }

      @Override
      public PlacedBody place(PackedBody body, Deadline deadline) {
        return placer.place(body, deadline);
      }

      @Override
      public void close() {}
    };
  }
}
