package io.thallus.internal.server;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/** Every live stream and connection of a server, so shutdown can reach them. */
public final class StreamRegistry {
  private final Set<ServerStream> streams = ConcurrentHashMap.newKeySet();
  private final Set<ServerConnectionHandler> connections = ConcurrentHashMap.newKeySet();
  private volatile boolean shuttingDown;

  void add(ServerStream stream) {
    streams.add(stream);
    if (shuttingDown) {
      stream.abort(io.thallus.Status.of(io.thallus.StatusCode.UNAVAILABLE, "the server is shutting down"), true);
    }
  }

  void remove(ServerStream stream) {
    streams.remove(stream);
  }

  void add(ServerConnectionHandler connection) {
    connections.add(connection);
  }

  void remove(ServerConnectionHandler connection) {
    connections.remove(connection);
  }

  public boolean isShuttingDown() {
    return shuttingDown;
  }

  public int streamCount() {
    return streams.size();
  }

  /** Stops every stream (each tells its client why) and refuses new ones. */
  public void shutDown() {
    shuttingDown = true;
    for (ServerStream stream : streams) {
      stream.abort(io.thallus.Status.of(io.thallus.StatusCode.UNAVAILABLE, "the server is shutting down"), true);
    }
  }

  public Set<ServerConnectionHandler> connections() {
    return Set.copyOf(connections);
  }
}
