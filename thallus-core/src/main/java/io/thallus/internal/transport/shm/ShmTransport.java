package io.thallus.internal.transport.shm;

import io.thallus.internal.transport.Hosts;
import io.thallus.spi.ClientOffer;
import io.thallus.spi.ServerTransport;
import io.thallus.spi.Transport;
import java.util.Map;

/**
 * Same host, through shared memory: the server copies each batch once into segments of {@code /dev/shm} that only
 * its user can open, and sends (segment, offset, length) descriptors; the client maps each segment once and wraps
 * the batch's bytes in place as {@code ArrowBuf}s. Segments are created pre-faulted and reused; a batch's space is
 * reused only after the client has released the batch. Ingested batches go the same way turned around: the client
 * copies them into segments of its own in the server's folder, the server maps them and DuckDB reads them there.
 */
public final class ShmTransport implements Transport {
  public static final String NAME = "shm";
  static final String DIRECTORY = NAME + ".dir";
  static final String SEGMENT_SUFFIX = ".seg";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public boolean confidentialUnderTls() {
    return true;
  }

  @Override
  public int preference() {
    return 30;
  }

  @Override
  public boolean isAvailableFor(String host) {
    return Hosts.isLocal(host);
  }

  @Override
  public ServerTransport startServer(ServerTransport.Context context) {
    return ShmServer.start(context);
  }

  @Override
  public ClientOffer offer(ClientOffer.Context context) {
    return ClientOffer.of(Map.of(), welcome -> ShmClientSession.open(context, welcome));
  }
}
