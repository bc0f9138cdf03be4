package io.thallus.internal.server;

import io.thallus.Status;
import io.thallus.StatusCode;
import java.util.LinkedHashSet;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Every live stream and connection of a server, so shutdown can reach them, limits can count them and deadlines
 * can be checked. Connections are either pending (not yet authenticated, counted against the handshake limit) or
 * clients (counted against the client limit), never both.
 */
public final class StreamRegistry {
  private final Set<ServerStream> streams = ConcurrentHashMap.newKeySet();
  private final Set<ServerConnectionHandler> connections = ConcurrentHashMap.newKeySet();
  /** In arrival order, so the oldest is the one to let go when strangers crowd in. */
  private final LinkedHashSet<ServerConnectionHandler> pending = new LinkedHashSet<>();
  private final Set<ServerConnectionHandler> clients = ConcurrentHashMap.newKeySet();
  private volatile boolean shuttingDown;

  /** Adds a stream unless the server already has {@code max} open; false when it is full. */
  synchronized boolean add(ServerStream stream, int max) {
    if (streams.size() >= max) {
      return false;
    }
    streams.add(stream);
    return true;
  }

  void remove(ServerStream stream) {
    streams.remove(stream);
  }

  /**
   * A new, unauthenticated connection. When more than {@code maxPending} are waiting to authenticate, one of them
   * is returned for the caller to close: the oldest that has not sent a byte, else the oldest. A flood of silent
   * sockets then costs only other silent sockets their place, never a client whose HELLO is on its way.
   */
  Optional<ServerConnectionHandler> addPending(ServerConnectionHandler connection, int maxPending) {
    connections.add(connection);
    synchronized (pending) {
      pending.add(connection);
      if (pending.size() <= maxPending) {
        return Optional.empty();
      }
      ServerConnectionHandler victim = pending.stream().filter(c -> !c.hasSpoken()).findFirst()
          .orElseGet(() -> pending.iterator().next());
      pending.remove(victim);
      return Optional.of(victim);
    }
  }

  /** Moves an authenticated connection from pending to clients, unless {@code maxClients} are connected. */
  synchronized boolean promote(ServerConnectionHandler connection, int maxClients) {
    synchronized (pending) {
      pending.remove(connection);
    }
    if (clients.size() >= maxClients) {
      return false;
    }
    clients.add(connection);
    return true;
  }

  void remove(ServerConnectionHandler connection) {
    synchronized (pending) {
      pending.remove(connection);
    }
    clients.remove(connection);
    connections.remove(connection);
  }

  public boolean isShuttingDown() {
    return shuttingDown;
  }

  public int streamCount() {
    return streams.size();
  }

  /** Authenticated clients connected now. */
  public int clientCount() {
    return clients.size();
  }

  /** Connections still authenticating. */
  public int pendingCount() {
    synchronized (pending) {
      return pending.size();
    }
  }

  /** Fails every stream whose client has let it wait past its deadline (run periodically). */
  public void expireIdle(long nowNanos) {
    for (ServerStream stream : streams) {
      stream.expireIfIdle(nowNanos);
    }
  }

  /** Stops every stream (each tells its client why) and refuses new ones. */
  public void shutDown() {
    shuttingDown = true;
    for (ServerStream stream : streams) {
      stream.abort(Status.of(StatusCode.UNAVAILABLE, "the server is shutting down"), true);
    }
  }

  public Set<ServerConnectionHandler> connections() {
    return Set.copyOf(connections);
  }
}
