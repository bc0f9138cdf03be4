package io.thallus.internal.transport.shm;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.BodyFetcher;
import io.thallus.spi.ClientOffer;
import io.thallus.spi.ClientSession;
import io.thallus.spi.IngestPlacer;
import io.thallus.spi.Transport;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * The shm transport's client side: results are lent from the server's segments ({@link SegmentReader}); ingested
 * batches are copied into segments of the client's own ({@link SegmentWriter}) in the server's folder, made at the
 * first ingest, which the server maps.
 */
final class ShmClientSession implements ClientSession {
  private final ClientOffer.Context context;
  private final Path folder;
  private final SegmentReader reader;
  private SegmentWriter writer;
  private IngestPlacer placer;
  private boolean closed;

  private ShmClientSession(ClientOffer.Context context, Path folder) {
    this.context = context;
    this.folder = folder;
    this.reader = new SegmentReader(folder, ShmServer.RESULTS);
  }

  static ShmClientSession open(ClientOffer.Context context, Map<String, String> welcome) {
    Path folder = Path.of(Transport.requireParameter(welcome, ShmTransport.DIRECTORY));
    if (!Files.isDirectory(folder)) {
      throw ThallusException.of(StatusCode.UNAVAILABLE, "the server's shared memory folder " + folder
          + " is not visible here: client and server are not on the same host");
    }
    if (!Files.isReadable(folder) || !Files.isExecutable(folder)) {
      // Checked here, not at the first batch, so that the client can still choose another transport.
      throw ThallusException.of(StatusCode.UNAVAILABLE, "the server's shared memory folder " + folder
          + " is not open to this user: shm needs client and server to run as the same user");
    }
    return new ShmClientSession(context, folder);
  }

  @Override
  public void fetch(BatchHeader header, Fetched done) {
    BodyFetcher.now(done, () -> reader.fetch(header));
  }

  /**
   * Ingested bodies are copied once into segments this client creates in the server's folder for this connection
   * (so the server removes them with the folder, even if this process dies), within the receive pool's size.
   */
  @Override
  public synchronized IngestPlacer ingestPlacer() {
    if (closed) {
      throw ThallusException.of(StatusCode.UNAVAILABLE, "the shm session is closed");
    }
    if (placer == null) {
      SegmentWriter segments = new SegmentWriter(folder, ShmServer.INGESTED, false, context.allocator(),
          context.receivePoolBytes());
      writer = segments;
      placer = IngestPlacer.of(Map.of(), segments::place);
    }
    return placer;
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    reader.close();
    if (writer != null) {
      writer.close();
    }
    // The folder is the server's; it is the client's to remove only when the server died without removing it,
    // and only if it is what a server of this user makes: a client never deletes where a server merely points.
    StaleFolders.removeIfStale(folder, ShmServer.PREFIX);
  }
}
