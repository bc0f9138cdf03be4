package io.thallus.internal.server;

import io.netty.channel.Channel;
import io.thallus.server.Admission;
import io.thallus.Status;
import io.thallus.StatusCode;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;

/**
 * Every live stream and connection of a server, so shutdown can reach them, limits can count them and deadlines
 * can be checked. Connections are either pending (not yet authenticated, counted against the handshake limit) or
 * clients (counted against the client limit and their credential's and address's quotas), never both.
 */
public final class StreamRegistry implements ServerMetrics.Counts {
  private final Set<ServerStream> streams = ConcurrentHashMap.newKeySet();
  private final Set<Channel> connections = ConcurrentHashMap.newKeySet();
  private final Admission admission;
  private final Executor engineThreads;
  /** In arrival order, so the oldest is the one to let go when strangers crowd in. */
  private final Admission.Strangers<Channel> pending;
  /** Each client, with the credential and address it counts against. Guarded by this. */
  private final Map<Channel, Admitted> clients = new ConcurrentHashMap<>();
  /** Each credential with a client connected: how many, and the lane all their statements share. Guarded by this. */
  private final Map<String, Credential> credentials = new HashMap<>();
  private final Admission.Quota<String> addresses;
  private volatile boolean shuttingDown;

  private record Admitted(String credential, String address) {}

  private static final class Credential {
    final EngineLane lane;
    int connections;

    Credential(EngineLane lane) {
      this.lane = lane;
    }
  }

  /** A registry admitting by {@code admission}; statements run on {@code engineThreads}. */
  public StreamRegistry(Admission admission, Executor engineThreads) {
    this.admission = admission;
    this.engineThreads = engineThreads;
    this.pending = new Admission.Strangers<>(admission.maxStrangers(), FirstByte::hasSpoken);
    this.addresses = new Admission.Quota<>(admission.maxConnectionsPerAddress());
  }

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
   * A new, unauthenticated connection. When more than the admission's {@code maxStrangers} are waiting to
   * authenticate, one of them is returned for the caller to close: the oldest that has not sent a byte, else the
   * oldest. A flood of silent sockets then costs only other silent sockets their place, never a client whose HELLO
   * is on its way.
   */
  Optional<Channel> addPending(Channel connection) {
    connections.add(connection);
    return pending.arrive(connection);
  }

  /** What a connection that has authenticated gets: its place, and the lane its credential's statements share. */
  record Promotion(Optional<String> refusal, Executor lane) {}

  /**
   * Moves an authenticated connection from pending to clients, unless the server has {@code maxClients} connected,
   * its credential or its address already holds its quota: all checked and taken at once, so racing connections
   * never pass a limit. {@code credential} is null when the server checks none (then only the address counts).
   */
  synchronized Promotion promote(Channel connection, int maxClients, String credential,
      String address) {
    pending.leave(connection);
    if (clients.size() >= maxClients) {
      return refused("the server has its maximum of " + maxClients + " clients connected; try again later");
    }
    Credential share = credential == null ? null : credentials.get(credential);
    if (share != null && share.connections >= admission.maxConnectionsPerCredential()) {
      return refused("this credential (" + credential + ") already has " + share.connections
          + " connections open, its quota (maxConnectionsPerCredential); close one first");
    }
    if (!addresses.tryTake(address)) {
      return refused("address " + address + " already has " + addresses.held(address)
          + " connections open, its quota (maxConnectionsPerAddress); close one first");
    }
    Executor lane = engineThreads;
    forgetIdleCredentials();
    if (credential != null) {
      share = credentials.computeIfAbsent(credential,
          c -> new Credential(new EngineLane(engineThreads, admission.maxStatementsPerCredential())));
      share.connections++;
      lane = share.lane;
    }
    clients.put(connection, new Admitted(credential, address));
    return new Promotion(Optional.empty(), lane);
  }

  /**
   * Drops the credentials with no connection left whose lane has finished. One whose last connection left while its
   * statements still run (a cancel takes effect at DuckDB's next check) keeps its lane, so a client that reconnects
   * shares it with them instead of getting a fresh quota of statements beside them.
   */
  private void forgetIdleCredentials() {
    credentials.values().removeIf(share -> share.connections == 0 && share.lane.isIdle());
  }

  private Promotion refused(String why) {
    return new Promotion(Optional.of(why), engineThreads);
  }

  synchronized void remove(Channel connection) {
    pending.leave(connection);
    Admitted admitted = clients.remove(connection);
    if (admitted != null) {
      addresses.giveBack(admitted.address());
      Credential share = admitted.credential() == null ? null : credentials.get(admitted.credential());
      if (share != null) {
        share.connections--;
      }
      forgetIdleCredentials();
    }
    connections.remove(connection);
  }

  /** Statements waiting for their credential's turn on the engine threads (maxStatementsPerCredential). */
  @Override
  public synchronized int statementsWaiting() {
    int waiting = 0;
    for (Credential share : credentials.values()) {
      waiting += share.lane.waitingCount();
    }
    return waiting;
  }

  public boolean isShuttingDown() {
    return shuttingDown;
  }

  @Override
  public int streamCount() {
    return streams.size();
  }

  /** Authenticated clients connected now. */
  @Override
  public int clientCount() {
    return clients.size();
  }

  /** Connections still authenticating. */
  @Override
  public int pendingCount() {
    return pending.count();
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

  public Set<Channel> connections() {
    return Set.copyOf(connections);
  }
}
