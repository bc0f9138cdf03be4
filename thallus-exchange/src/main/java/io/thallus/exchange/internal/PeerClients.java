package io.thallus.exchange.internal;

import io.thallus.ClientOptions;
import io.thallus.Location;
import io.thallus.ThallusClient;
import io.thallus.exchange.EndpointAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.arrow.memory.BufferAllocator;

/**
 * One Thallus connection per peer endpoint, made at first use and kept: a reducer's pulls and a mapper's pushes to
 * that peer share it, so a pull costs its request and answer, never a handshake. A connection that broke is made
 * again at the next use.
 */
public final class PeerClients implements AutoCloseable {
  private final BufferAllocator allocator;
  private final String transport;
  private final ClientOptions options;
  private final Map<EndpointAddress, ThallusClient> clients = new ConcurrentHashMap<>();
  private volatile boolean closed;

  public PeerClients(BufferAllocator allocator, String transport, ClientOptions options) {
    this.allocator = allocator;
    this.transport = transport;
    this.options = options;
  }

  /** The connection to {@code peer}, connecting now if there is none (failures are Thallus' UNAVAILABLE). */
  public ThallusClient client(EndpointAddress peer) {
    if (closed) {
      throw io.thallus.ThallusException.of(io.thallus.StatusCode.UNAVAILABLE, "the exchange endpoint is closed");
    }
    ThallusClient client = clients.get(peer);
    if (client != null && client.isConnected()) {
      return client;
    }
    synchronized (this) {
      client = clients.get(peer);
      if (client != null && client.isConnected()) {
        return client;
      }
      if (client != null) {
        clients.remove(peer);
        client.close();
      }
      ThallusClient made = ThallusClient.connect(allocator, Location.of(peer.host(), peer.port(), transport), options);
      clients.put(peer, made);
      return made;
    }
  }

  /** Forgets a connection that failed, so the next use connects again. */
  public synchronized void forget(EndpointAddress peer, ThallusClient client) {
    if (clients.remove(peer, client)) {
      client.close();
    }
  }

  @Override
  public synchronized void close() {
    closed = true;
    clients.values().forEach(ThallusClient::close);
    clients.clear();
  }
}
