package io.thallus.flightsql;

import io.thallus.ClientOptions;
import io.thallus.Location;
import io.thallus.StatusCode;
import io.thallus.ThallusClient;
import io.thallus.ThallusException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;

/**
 * The Flight SQL sessions of one server, and what lives in them: prepared statements, statements waiting for their
 * DoGet, and open transactions, each named by a random id that is also its capability (128 bits, never reused).
 * A session idle for longer than the idle timeout is closed with everything in it; so is every session when the
 * server closes.
 */
final class SessionRegistry implements AutoCloseable {
  private static final SecureRandom RANDOM = new SecureRandom();

  private final BufferAllocator allocator;
  private final Location thallus;
  private final ClientOptions baseOptions;
  private final Duration idleTimeout;
  private final int maxSessions;
  /** Sessions whose native connection is being made: they hold their places. Guarded by this. */
  private int opening;
  /** Set when the registry closes: a session opened after that is closed at once. Guarded by this. */
  private boolean closed;
  private final io.thallus.server.Admission.Quota<String> perAddress;
  private final Map<String, FlightSession> sessions = new ConcurrentHashMap<>();
  /** The Arrow memory one session may hold: its native stream's batches and its results on their way out. */
  private final long memoryPerClient;
  /** Prepared statements and results planned but not read, of every session. */
  private final Statements.Table statements;
  private final Map<String, FlightSession> transactions = new ConcurrentHashMap<>();
  /** Connection (remote address and credential digest) to the session it opened. Changed under {@link #open}. */
  private final Map<String, FlightSession> connections = new ConcurrentHashMap<>();
  /** The remote addresses of the gRPC connections open now. Guarded by itself. */
  private final java.util.Set<String> openConnections = new java.util.HashSet<>();
  /**
   * Ids of the last sessions closed because their native connection was lost or their gRPC connection ended, with
   * why, for a clear answer to their token.
   */
  private final Map<String, String> lost = new java.util.LinkedHashMap<>() {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, String> eldest) {
      return size() > 4096;
    }
  };
  private final ScheduledExecutorService reaper = Executors.newSingleThreadScheduledExecutor(runnable -> {
    Thread thread = new Thread(runnable, "thallus-flightsql-reaper");
    thread.setDaemon(true);
    return thread;
  });

  SessionRegistry(BufferAllocator allocator, Location thallus, ClientOptions baseOptions, Duration idleTimeout,
      int maxSessions, io.thallus.server.Admission admission, long memoryPerClient, Statements.Limits statementLimits) {
    this.perAddress = new io.thallus.server.Admission.Quota<>(admission.maxSessionsPerAddress());
    this.memoryPerClient = memoryPerClient;
    this.statements = new Statements.Table(statementLimits);
    this.allocator = allocator;
    this.thallus = thallus;
    this.baseOptions = baseOptions;
    this.idleTimeout = idleTimeout;
    this.maxSessions = maxSessions;
    // Often enough to close a session whose native connection was lost soon after (releasing its statements).
    long period = Math.max(1, Math.min(idleTimeout.toMillis() / 4, 1_000));
    reaper.scheduleWithFixedDelay(this::closeIdle, period, period, TimeUnit.MILLISECONDS);
  }

  static String newId() {
    byte[] bytes = new byte[16];
    RANDOM.nextBytes(bytes);
    return HexFormat.of().formatHex(bytes);
  }

  /**
   * A new session on a native connection opened with {@code credentials} (a user and password, a token, or none):
   * the native server checks them, so a Flight SQL client gets in exactly when a native one would, and counts the
   * connection against the credential's quota. {@code address} is the client's IP (null outside a gRPC call), whose
   * sessions count against {@code maxSessionsPerAddress}. The places are taken before the connection is made, under
   * one lock, so clients racing for the last place never pass a limit.
   */
  FlightSession open(Map<String, String> credentials, String clientName, String address) {
    refuseLost(credentials.get(io.thallus.server.Authentication.TOKEN));
    if (sessions.size() + opening >= maxSessions) {
      closeIdle();
    }
    synchronized (this) {
      if (sessions.size() + opening >= maxSessions) {
        throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, "the Flight SQL server has " + maxSessions
            + " sessions open, its limit (maxSessions); a client that keeps the bearer token (or cookie) it was given"
            + " reuses its session");
      }
      if (address != null && !perAddress.tryTake(address)) {
        throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, "the clients at " + address + " have "
            + perAddress.held(address) + " Flight SQL sessions open, their quota (maxSessionsPerAddress); a client "
            + "that keeps the bearer token (or cookie) it was given reuses its session");
      }
      opening++;
    }
    String id = newId();
    BufferAllocator child = null;
    try {
      child = allocator.newChildAllocator("flight-session-" + id.substring(0, 8), 0,
          Math.min(memoryPerClient, allocator.getLimit()));
      ClientOptions.Builder options = baseOptions.toBuilder().clientName(clientName);
      String token = credentials.get(io.thallus.server.Authentication.TOKEN);
      String user = credentials.get(io.thallus.server.Authentication.USER);
      if (token != null) {
        options.token(token);
      } else if (user != null) {
        options.user(user, credentials.getOrDefault(io.thallus.server.Authentication.PASSWORD, ""));
      }
      ThallusClient client = ThallusClient.connect(child, thallus, options.build());
      FlightSession session = new FlightSession(id, child, client, address);
      boolean shutDown;
      synchronized (this) {
        shutDown = closed;
        if (!shutDown) {
          sessions.put(id, session);
          opening--;
        }
      }
      if (shutDown) {
        // Opened while the registry closed: nobody would close it later.
        session.close();
        throw ThallusException.of(StatusCode.UNAVAILABLE, "the Flight SQL server is shutting down");
      }
      return session;
    } catch (RuntimeException e) {
      synchronized (this) {
        opening--;
        if (address != null) {
          perAddress.giveBack(address);
        }
      }
      if (child != null) {
        child.close();
      }
      throw e;
    }
  }

  /**
   * The open session named by {@code id}, or null. A session whose native connection was lost is closed here, with
   * its statements: each of its calls would fail the same way, so its client logs in again (or, on a connection
   * that sent its credentials, gets a new session with its next call).
   */
  FlightSession session(String id) {
    FlightSession session = id == null ? null : sessions.get(id);
    if (session != null && !session.connected()) {
      closeLost(session);
      return null;
    }
    if (session != null) {
      session.touch();
    }
    return session;
  }

  private static final String NATIVE_LOST = "its connection to the Thallus server was lost";
  private static final String CONNECTION_ENDED = "the gRPC connection that opened it ended before any call named it "
      + "by its token";

  private void closeLost(FlightSession session) {
    remember(session, NATIVE_LOST);
    close(session);
  }

  private void remember(FlightSession lostSession, String why) {
    synchronized (lost) {
      lost.put(lostSession.id(), why);
    }
  }

  /** UNAUTHENTICATED saying why, for a bearer token that named a session whose native connection was lost. */
  private void refuseLost(String token) {
    String why;
    synchronized (lost) {
      why = token == null ? null : lost.get(token);
    }
    if (why != null) {
      throw ThallusException.of(StatusCode.UNAUTHENTICATED, "Flight SQL session " + token + " ended: " + why
          + "; log in again for a new session");
    }
  }

  /** The session named by {@code id}, or NOT_FOUND naming what the id stood for. */
  FlightSession require(String id, String what) {
    FlightSession session = session(id);
    if (session == null) {
      throw ThallusException.of(StatusCode.NOT_FOUND, "no such " + what + " (its session ended, or it never existed)");
    }
    return session;
  }

  FlightSession byConnection(String key) {
    FlightSession session = connections.get(key);
    return session == null ? null : session(session.id());
  }

  /**
   * Lets the calls of the gRPC connection at {@code remote} find {@code session} by {@code key} (that connection and
   * its credentials), and returns the session those calls use: {@code session}, or the one an earlier call that
   * raced this one bound first (then {@code session} is closed, so that no session is left that no call can reach).
   * Null, and the session closed, when that connection has already ended: nothing could reach the session again.
   */
  FlightSession bindConnection(String remote, String key, FlightSession session) {
    FlightSession bound = null;
    synchronized (openConnections) {
      if (openConnections.contains(remote)) {
        bound = connections.putIfAbsent(key, session);
        if (bound == null) {
          return session;
        }
      }
    }
    close(session);
    return bound;
  }

  /** A gRPC connection has opened at {@code remote} (before any of its calls). */
  void connectionOpened(String remote) {
    synchronized (openConnections) {
      openConnections.add(remote);
    }
  }

  /**
   * The gRPC connection at {@code remote} has ended: the sessions it opened whose clients never named them (by
   * bearer token or cookie) are closed now, with their native connections and everything in them; a named one may
   * still be used from another connection and stays until its idle timeout.
   */
  void connectionClosed(String remote) {
    List<FlightSession> unreachable = new ArrayList<>();
    synchronized (openConnections) {
      openConnections.remove(remote);
      String prefix = remote + "|";
      for (java.util.Iterator<Map.Entry<String, FlightSession>> it = connections.entrySet().iterator();
          it.hasNext(); ) {
        Map.Entry<String, FlightSession> bound = it.next();
        if (bound.getKey().startsWith(prefix)) {
          it.remove();
          if (!bound.getValue().isNamed()) {
            unreachable.add(bound.getValue());
          }
        }
      }
    }
    for (FlightSession session : unreachable) {
      try {
        remember(session, CONNECTION_ENDED);
        close(session);
      } catch (RuntimeException e) {
        // One session that fails to close must not keep the others open.
        System.getLogger(SessionRegistry.class.getName()).log(System.Logger.Level.WARNING,
            "closing Flight SQL session " + session.id() + " failed", e);
      }
    }
  }

  /** Keeps a prepared statement under a new handle (evicting the least recently used past the bounds). */
  String addPrepared(Statements.Prepared statement) {
    require(statement.sessionId(), "session");
    return statements.add(statement);
  }

  Statements.Prepared prepared(String id) {
    Statements.Prepared statement = statements.get(id, Statements.Prepared.class, "prepared statement");
    require(statement.sessionId(), "session of prepared statement " + id);
    return statement;
  }

  void closePrepared(String id) {
    Statements.Prepared statement = statements.remove(id, Statements.Prepared.class);
    if (statement != null) {
      statement.close();
    }
  }

  /** Keeps a planned statement under a new handle until its DoGet (evicting as {@link #addPrepared} does). */
  String addPending(Statements.Pending statement) {
    require(statement.sessionId(), "session");
    return statements.add(statement);
  }

  Statements.Pending pending(String id) {
    Statements.Pending statement = statements.get(id, Statements.Pending.class, "statement");
    require(statement.sessionId(), "session of statement " + id);
    return statement;
  }

  Statements.Pending removePending(String id) {
    return statements.remove(id, Statements.Pending.class);
  }

  /** The statement handles the server holds now, and their bytes (for tests and metrics). */
  int statementCount() {
    return statements.size();
  }

  long statementBytes() {
    return statements.bytes();
  }

  String beginTransaction(FlightSession session) {
    for (Map.Entry<String, FlightSession> open : transactions.entrySet()) {
      if (open.getValue() == session) {
        throw ThallusException.of(StatusCode.FAILED_PRECONDITION, "this session has a transaction open already; "
            + "end it first (DuckDB has one transaction per session)");
      }
    }
    String id = newId();
    transactions.put(id, session);
    return id;
  }

  /** The session of an open transaction, or NOT_FOUND. */
  FlightSession transaction(String id) {
    FlightSession session = transactions.get(id);
    if (session == null || session(session.id()) == null) {
      throw ThallusException.of(StatusCode.NOT_FOUND, "no such transaction (ended, its session ended, or never "
          + "begun here)");
    }
    return session;
  }

  void endTransaction(String id) {
    transactions.remove(id);
  }

  /** Whether the session named by {@code sessionId} has a Flight SQL transaction open now. */
  boolean inTransaction(String sessionId) {
    for (FlightSession open : transactions.values()) {
      if (open.id().equals(sessionId)) {
        return true;
      }
    }
    return false;
  }

  /** Closes a session at its client's request (CloseSession), with everything in it. */
  void closeSession(String id) {
    FlightSession session = id == null ? null : sessions.get(id);
    if (session != null) {
      close(session);
    }
  }

  int sessionCount() {
    return sessions.size();
  }

  private void closeIdle() {
    long limit = idleTimeout.toNanos();
    List<FlightSession> idle = new ArrayList<>();
    List<FlightSession> lost = new ArrayList<>();
    for (FlightSession session : sessions.values()) {
      if (!session.connected()) {
        lost.add(session);
      } else if (session.idleNanos() > limit && !busy(session)) {
        idle.add(session);
      }
    }
    lost.forEach(session -> remember(session, NATIVE_LOST));
    idle.addAll(lost);
    for (FlightSession session : idle) {
      try {
        close(session);
      } catch (RuntimeException e) {
        // A session that fails to close must not stop the reaper, which closes the others.
        System.getLogger(SessionRegistry.class.getName()).log(System.Logger.Level.WARNING,
            "closing Flight SQL session " + session.id() + " failed", e);
      }
    }
  }

  private boolean busy(FlightSession session) {
    return statements.any(session.id(), handle -> handle instanceof Statements.Pending running && running.running());
  }

  private void close(FlightSession session) {
    synchronized (this) {
      if (sessions.remove(session.id()) == null) {
        return;
      }
      if (session.address() != null) {
        perAddress.giveBack(session.address());
      }
    }
    statements.removeSession(session.id());
    transactions.values().removeIf(open -> open == session);
    connections.values().removeIf(bound -> bound == session);
    session.close();
  }

  @Override
  public void close() {
    synchronized (this) {
      closed = true;
    }
    reaper.shutdownNow();
    try {
      for (FlightSession session : List.copyOf(sessions.values())) {
        try {
          close(session);
        } catch (RuntimeException e) {
          // The others still close; the failure (say a leak) is the one to read about.
          System.getLogger(SessionRegistry.class.getName()).log(System.Logger.Level.WARNING,
              "closing Flight SQL session " + session.id() + " failed: " + e);
        }
      }
    } finally {
      statements.close();
    }
  }
}
