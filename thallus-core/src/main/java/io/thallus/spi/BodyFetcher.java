package io.thallus.spi;

import io.thallus.ThallusException;

/**
 * Takes batch bodies a peer placed: the client's side of the read direction ({@link ClientSession}) and the
 * server's side of the write direction ({@link IngestFetcher}). Core decodes every BATCH frame, rebuilds inline
 * bodies itself and keeps batches in order; the fetcher only brings out-of-line bodies into this process.
 */
public interface BodyFetcher {
  /** Where a fetch ends: exactly one of the two, once, on any thread. */
  interface Fetched {
    void body(FetchedBody body);

    /** The body cannot be fetched; its batch (and what waits for it) fails with {@code error}. */
    void failed(ThallusException error);
  }

  /**
   * Fetches the body {@code header}'s descriptors name. Called on the control connection's thread for every
   * out-of-line BATCH, in arrival order, also for batches nobody will take any more (a transport whose bodies follow
   * their frames on a stream of their own must read them to stay in step); it must not block for long (fetch
   * asynchronously, or within the I/O deadline at most).
   */
  void fetch(BatchHeader header, Fetched done);

  /** For a fetcher whose bodies are in by the time the call returns: hands {@code done} the body, or the failure. */
  static void now(Fetched done, java.util.function.Supplier<FetchedBody> fetch) {
    FetchedBody body;
    try {
      body = fetch.get();
    } catch (ThallusException e) {
      done.failed(e);
      return;
    }
    done.body(body);
  }
}
