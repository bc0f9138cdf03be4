package io.thallus.internal.transport.cma;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.internal.transport.Hosts;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.BodyFetcher;
import io.thallus.spi.Deadline;
import io.thallus.spi.IngestFetcher;
import io.thallus.spi.PackedBody;
import io.thallus.spi.PlacedBody;
import io.thallus.spi.ServerSession;
import io.thallus.spi.ServerTransport;
import io.thallus.spi.Transport;
import java.net.InetSocketAddress;
import java.util.Map;

/**
 * The cma transport's server side. It copies nothing: a batch's descriptors are the addresses of its own buffers,
 * and the batch is kept alive until the client says it has read it. Ingested batches are read the other way: the
 * server pulls them out of the client, after proving with the client's probe that it may.
 */
final class CmaServer implements ServerTransport {
  private final Context context;
  private final InPlace exposed = new InPlace();

  CmaServer(Context context) {
    this.context = context;
  }

  @Override
  public ServerSession accept(InetSocketAddress client, Map<String, String> offer,
      org.apache.arrow.memory.BufferAllocator clientMemory) {
    if (!Hosts.isLocal(client.getAddress())) {
      throw ThallusException.of(StatusCode.UNAVAILABLE, "cma needs the client on the server's host");
    }
    return new Session(clientMemory);
  }

  @Override
  public void close() {
    exposed.close();
  }

  private final class Session implements ServerSession {
    private final org.apache.arrow.memory.BufferAllocator clientMemory;

    Session(org.apache.arrow.memory.BufferAllocator clientMemory) {
      this.clientMemory = clientMemory;
    }

    @Override
    public Map<String, String> welcomeParameters() {
      return exposed.parameters(CmaTransport.PID, CmaTransport.PROBE_ADDRESS, CmaTransport.PROBE_TOKEN);
    }

    @Override
    public PlacedBody place(PackedBody body, Deadline deadline) {
      return InPlace.place(body);
    }

    /** Pulls each ingested body out of the client's memory into a buffer of the client's budget. */
    @Override
    public IngestFetcher ingestFetcher(Map<String, String> parameters) {
      long pid = Long.parseLong(Transport.requireParameter(parameters, CmaTransport.CLIENT_PID));
      long probe = Long.parseLong(Transport.requireParameter(parameters, CmaTransport.CLIENT_PROBE_ADDRESS));
      String token = Transport.requireParameter(parameters, CmaTransport.CLIENT_PROBE_TOKEN);
      CmaReader reader = new CmaReader(clientMemory, pid, "client", context.memoryPerClient());
      try {
        reader.prove(probe, token);
      } catch (RuntimeException e) {
        reader.close();
        throw e;
      }
      return new IngestFetcher() {
        /** Pulls the body now, on the control thread, as the client does with results. */
        @Override
        public void fetch(BatchHeader header, Fetched done) {
          BodyFetcher.now(done, () -> reader.pull(header, java.time.Duration.ZERO));
        }

        @Override
        public void close() {
          reader.close();
        }
      };
    }

    @Override
    public void close() {}
  }
}
