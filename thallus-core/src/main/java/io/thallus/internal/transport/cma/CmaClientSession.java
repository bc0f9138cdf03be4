package io.thallus.internal.transport.cma;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.BodyFetcher;
import io.thallus.spi.ClientOffer;
import io.thallus.spi.ClientSession;
import io.thallus.spi.IngestPlacer;
import io.thallus.spi.Transport;
import java.time.Duration;
import java.util.Map;

/**
 * The cma transport's client side: results are pulled out of the server's memory ({@link CmaReader}) on the control
 * thread in arrival order, where a full receive pool fails the connection at once rather than block that thread.
 * Ingested batches go the other way: exposed where they lie in this process, for the server to pull.
 */
final class CmaClientSession implements ClientSession {
  private static final Duration NO_WAIT = Duration.ZERO;

  private final CmaReader reader;
  private InPlace exposed;
  private IngestPlacer placer;
  private boolean closed;

  private CmaClientSession(CmaReader reader) {
    this.reader = reader;
  }

  static CmaClientSession open(ClientOffer.Context context, Map<String, String> welcome) {
    long pid = Long.parseLong(Transport.requireParameter(welcome, CmaTransport.PID));
    long probe = Long.parseLong(Transport.requireParameter(welcome, CmaTransport.PROBE_ADDRESS));
    String token = Transport.requireParameter(welcome, CmaTransport.PROBE_TOKEN);
    CmaReader reader = new CmaReader(context.allocator(), pid, "server", context.receivePoolBytes());
    try {
      reader.prove(probe, token);
      return new CmaClientSession(reader);
    } catch (RuntimeException e) {
      reader.close();
      throw e;
    }
  }

  @Override
  public void fetch(BatchHeader header, Fetched done) {
    BodyFetcher.now(done, () -> reader.pull(header, NO_WAIT));
  }

  /** Ingested batches stay where they are until the server has pulled them. */
  @Override
  public synchronized IngestPlacer ingestPlacer() {
    if (closed) {
      throw ThallusException.of(StatusCode.UNAVAILABLE, "the cma session is closed");
    }
    if (placer == null) {
      exposed = new InPlace();
      Map<String, String> parameters = exposed.parameters(CmaTransport.CLIENT_PID,
          CmaTransport.CLIENT_PROBE_ADDRESS, CmaTransport.CLIENT_PROBE_TOKEN);
      placer = IngestPlacer.of(parameters, (body, deadline) -> InPlace.place(body));
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
    if (exposed != null) {
      exposed.close();
    }
  }
}
