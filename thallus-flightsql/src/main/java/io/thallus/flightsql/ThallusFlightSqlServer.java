package io.thallus.flightsql;

import io.thallus.ClientOptions;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.FlightServer;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;

/**
 * Arrow Flight SQL in front of a Thallus server. Each Flight SQL session is a native connection to the server, made
 * with the client's own credentials: the same engine, sessions, authentication, data root and limits as the native
 * protocol, with Flight status codes for its errors. A FlightInfo's endpoint also announces the server's Thallus
 * lanes in its app metadata, which Thallus clients take ({@link FastLanes}) and other Flight clients do not read.
 *
 * <pre>{@code
 * try (ThallusFlightSqlServer flightSql = ThallusFlightSqlServer.builder(allocator, server.getLocation())
 *     .port(31337).build().start()) { ... }
 * }</pre>
 */
public final class ThallusFlightSqlServer implements AutoCloseable {
  private final BufferAllocator allocator;
  private final SessionRegistry sessions;
  private final FlightAdmission admission;
  private final FlightServer server;
  private ThallusSqlProducer producer;
  private final boolean tls;
  private final String host;

  private ThallusFlightSqlServer(Builder b) {
    this.allocator = b.allocator.newChildAllocator("thallus-flightsql", 0,
        Math.min(b.allocator.getLimit(), b.memoryLimit));
    this.host = b.host;
    this.tls = b.certificateChain != null;
    this.sessions = new SessionRegistry(allocator, b.thallus, b.clientOptions, b.sessionIdleTimeout, b.maxSessions,
        b.admission, b.memoryPerClient, new Statements.Limits(b.maxStatementsPerSession,
            b.maxStatementBytesPerSession, b.maxStatements, b.maxStatementBytes));
    this.admission = new FlightAdmission(b.admission);
    try {
      this.server = flightServer(b);
    } catch (RuntimeException e) {
      if (producer != null) {
        producer.close();
      }
      sessions.close();
      admission.close();
      allocator.close();
      throw e;
    }
  }

  private FlightServer flightServer(Builder b) {
    producer = new ThallusSqlProducer(sessions, allocator, LaneAnnouncement.encode(b.lanes, tls), sqlInfo(),
        b.putDescriptorTimeout, b.maxResultMessageBytes);
    Location location = tls ? Location.forGrpcTls(b.host, b.port) : Location.forGrpcInsecure(b.host, b.port);
    FlightServer.Builder builder = FlightServer.builder(allocator, location, producer)
        .headerAuthenticator(new SessionAuthenticator(sessions, admission))
        // Data messages (DoPut batches) up to their limit, checked by gRPC before a body is read; commands are
        // bounded lower as they are read (InboundMessageLimits).
        .maxInboundMessageSize(Math.max(b.maxDataMessageBytes, b.maxCommandMessageBytes))
        .transportHint("grpc.builderConsumer", (java.util.function.Consumer<io.grpc.netty.NettyServerBuilder>)
            netty -> {
              // A connection with no call for the connection idle timeout is closed (GOAWAY), as the native port
              // closes a connection with no stream: its gRPC client reconnects at its next call, and the session it
              // opened without naming it ends with it (ConnectionEnds).
              netty.maxConnectionIdle(b.connectionIdleTimeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)
                  .addStreamTracerFactory(new ConnectionAddresses())
                  .addStreamTracerFactory(new InboundMessageLimits(b.maxCommandMessageBytes,
                      admission::resetAnsweredRequests))
                  .addTransportFilter(new ConnectionEnds(sessions));
              admission.configure(netty);
            });
    if (tls) {
      try {
        builder.useTls(b.certificateChain.toFile(), b.privateKey.toFile());
      } catch (IOException e) {
        throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "cannot use " + b.certificateChain + " and "
            + b.privateKey + " for TLS: " + e.getMessage(), e);
      }
    }
    return builder.build();
  }

  /** A front door for the Thallus server at {@code thallus}, which its sessions connect to. */
  public static Builder builder(BufferAllocator allocator, io.thallus.Location thallus) {
    return new Builder(allocator, thallus);
  }

  private static SqlInfoValues sqlInfo() {
    String version = Objects.requireNonNullElse(ThallusFlightSqlServer.class.getPackage().getImplementationVersion(),
        "development");
    return new SqlInfoValues(version, Objects.requireNonNullElse(
        org.apache.arrow.vector.VectorSchemaRoot.class.getPackage().getImplementationVersion(), "19.0.0"));
  }

  public ThallusFlightSqlServer start() {
    try {
      server.start();
    } catch (IOException e) {
      close();
      throw ThallusException.of(StatusCode.UNAVAILABLE, "cannot start the Flight SQL server on " + host + ": "
          + e.getMessage(), e);
    }
    return this;
  }

  public int port() {
    return server.getPort();
  }

  /** {@code grpc+tcp://host:port}, or {@code grpc+tls://} with TLS. */
  public String location() {
    return (tls ? "grpc+tls://" : "grpc+tcp://") + host + ":" + port();
  }

  /** Arrow memory the Flight SQL server holds now (every session's included). */
  long memoryInUse() {
    return allocator.getAllocatedMemory();
  }

  /** DoGets being answered now, whether their clients read or not. */
  int resultsInFlight() {
    return producer.resultsInFlight();
  }

  /** Prepared and planned statements held now, over all sessions. */
  int statementCount() {
    return sessions.statementCount();
  }

  /** Sessions open now (each one native connection). */
  public int sessionCount() {
    return sessions.sessionCount();
  }

  /** Connections waiting to authenticate now (see {@link io.thallus.server.Admission}). */
  public int strangerCount() {
    return admission.strangerCount();
  }

  @Override
  public void close() {
    try {
      server.shutdown();
      if (!server.awaitTermination(10, TimeUnit.SECONDS)) {
        server.close();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      // Each step runs whatever the one before threw; the allocator last, where it reports what was left.
      try {
        producer.close();
      } finally {
        try {
          sessions.close();
        } finally {
          try {
            admission.close();
          } finally {
            allocator.close();
          }
        }
      }
    }
  }

  /** Typed settings of a {@link ThallusFlightSqlServer}. */
  public static final class Builder {
    private final BufferAllocator allocator;
    private final io.thallus.Location thallus;
    private String host = "127.0.0.1";
    private int port;
    private Path certificateChain;
    private Path privateKey;
    private ClientOptions clientOptions = ClientOptions.defaults();
    private List<io.thallus.Location> lanes = List.of();
    private Duration sessionIdleTimeout = Duration.ofMinutes(10);
    private Duration putDescriptorTimeout = Duration.ofSeconds(10);
    private Duration connectionIdleTimeout = Duration.ofHours(1);
    private int maxSessions = 256;
    private io.thallus.server.Admission admission = io.thallus.server.Admission.defaults();
    private long memoryLimit = 2L << 30;
    private long memoryPerClient = 1L << 30;
    private int maxCommandMessageBytes = 4 << 20;
    private int maxDataMessageBytes = 32 << 20;
    private int maxResultMessageBytes = ResultMessages.DEFAULT_MAX_BYTES;
    private int maxStatementsPerSession = Statements.Limits.DEFAULT.perSession();
    private long maxStatementBytesPerSession = Statements.Limits.DEFAULT.bytesPerSession();
    private int maxStatements = Statements.Limits.DEFAULT.perServer();
    private long maxStatementBytes = Statements.Limits.DEFAULT.bytesPerServer();

    private Builder(BufferAllocator allocator, io.thallus.Location thallus) {
      this.allocator = Objects.requireNonNull(allocator);
      this.thallus = Objects.requireNonNull(thallus);
    }

    /** The address to listen on (default 127.0.0.1). */
    public Builder host(String value) {
      this.host = Objects.requireNonNull(value);
      return this;
    }

    /** The port to listen on (default 0: any free port, see {@link #port()}). */
    public Builder port(int value) {
      if (value < 0 || value > 65535) {
        throw new IllegalArgumentException("port must be 0..65535, not " + value);
      }
      this.port = value;
      return this;
    }

    /** Serves gRPC over TLS with this certificate chain and PKCS#8 key (PEM files). */
    public Builder tls(Path certificateChain, Path privateKey) {
      this.certificateChain = Objects.requireNonNull(certificateChain);
      this.privateKey = Objects.requireNonNull(privateKey);
      return this;
    }

    /**
     * Options of the native connections the sessions make (TLS trust for a TLS server, timeouts); the credentials
     * are always the Flight SQL client's.
     */
    public Builder clientOptions(ClientOptions value) {
      this.clientOptions = Objects.requireNonNull(value);
      return this;
    }

    /**
     * The Thallus lanes a FlightInfo's endpoint announces in its app metadata, fastest first (default: none), each
     * naming its transport ({@code thallus+shm://host:port}). With {@link #tls} only transports whose bodies stay
     * protected under TLS may be announced (not tcp, not rdma): {@link #build} refuses the others. Prefer
     * {@link #lanes(io.thallus.server.ThallusServer)} for a server in this process.
     */
    public Builder lanes(List<io.thallus.Location> value) {
      this.lanes = List.copyOf(value);
      return this;
    }

    /**
     * Announces the lanes {@code server} really offers: each transport it serves now at its location, fastest first
     * (a TLS server offers no tcp or rdma lane).
     */
    public Builder lanes(io.thallus.server.ThallusServer server) {
      io.thallus.Location at = server.getLocation();
      this.lanes = server.transports().stream().map(at::withTransport).toList();
      return this;
    }

    /** How long a session may stay unused before it is closed with its statements (default 10 minutes). */
    public Builder sessionIdleTimeout(Duration value) {
      if (value.isNegative() || value.isZero()) {
        throw new IllegalArgumentException("the session idle timeout must be positive, not " + value);
      }
      this.sessionIdleTimeout = value;
      return this;
    }

    /**
     * How long a gRPC connection with no call in progress may stay open (default 1 hour, the native port's
     * connection idle timeout); then the server closes it, and its client's next call opens a new one.
     */
    public Builder connectionIdleTimeout(Duration value) {
      if (value.isNegative() || value.isZero()) {
        throw new IllegalArgumentException("the connection idle timeout must be positive, not " + value);
      }
      this.connectionIdleTimeout = value;
      return this;
    }

    /**
     * How long a DoPut may take to send its first message, the descriptor naming its command (default 10 seconds);
     * past it the call is answered TIMED_OUT and ends, so a client that opens a DoPut and sends nothing holds no
     * thread, call or session.
     */
    public Builder putDescriptorTimeout(Duration value) {
      if (value.isNegative() || value.isZero()) {
        throw new IllegalArgumentException("the put descriptor timeout must be positive, not " + value);
      }
      this.putDescriptorTimeout = value;
      return this;
    }

    /** The most sessions open at once (default 256); past it a new client gets RESOURCE_EXHAUSTED. */
    public Builder maxSessions(int value) {
      if (value < 1) {
        throw new IllegalArgumentException("maxSessions must be at least 1, not " + value);
      }
      this.maxSessions = value;
      return this;
    }

    /**
     * Who gets in and how much each may hold (default {@link io.thallus.server.Admission#defaults()}), as on the native
     * port: a connection that sends no call with valid credentials within {@code handshakeTimeout} is closed, and
     * past {@code maxStrangers} such connections the oldest silent one is; connections per address
     * ({@code maxConnectionsPerAddress}) and sessions per address ({@code maxSessionsPerAddress}) are counted here,
     * sessions per credential by the native server (each session is a native connection with the client's
     * credentials).
     */
    public Builder admission(io.thallus.server.Admission policy) {
      this.admission = Objects.requireNonNull(policy, "admission");
      return this;
    }

    /**
     * Arrow memory the Flight SQL server may hold at once, in bytes (default 2 GiB): gRPC's incoming batches (bulk
     * ingest, parameters) and every session's results in flight. Past it a call fails RESOURCE_EXHAUSTED.
     */
    public Builder memoryLimit(long bytes) {
      if (bytes < 1) {
        throw new IllegalArgumentException("the memory limit must be positive, not " + bytes);
      }
      this.memoryLimit = bytes;
      return this;
    }

    /**
     * Arrow memory one session may hold at once, in bytes (default 1 GiB, at most {@link #memoryLimit}): its native
     * stream's batches read ahead, its results on their way out, its bound parameters. Past it a call of that
     * session fails RESOURCE_EXHAUSTED; other sessions go on.
     */
    public Builder memoryPerClient(long bytes) {
      this.memoryPerClient = positive(bytes, "memoryPerClient");
      return this;
    }

    /**
     * The largest command message taken (default 4 MiB, the native frame limit): GetFlightInfo, GetSchema, DoGet,
     * DoAction and Handshake. A larger one fails RESOURCE_EXHAUSTED naming the limit, before it is parsed.
     */
    public Builder maxCommandMessageBytes(int bytes) {
      this.maxCommandMessageBytes = Math.toIntExact(positive(bytes, "maxCommandMessageBytes"));
      return this;
    }

    /**
     * The largest data message taken (default 32 MiB; ADBC sends batches of up to 16 MiB): each message of a DoPut
     * (bulk ingest, parameters). A larger one fails RESOURCE_EXHAUSTED before its body is read.
     */
    public Builder maxDataMessageBytes(int bytes) {
      this.maxDataMessageBytes = Math.toIntExact(positive(bytes, "maxDataMessageBytes"));
      return this;
    }

    /**
     * The largest message of a result sent (default 8 MiB): a DoGet sends a batch larger than this as row ranges that
     * each fit, so wide rows never pass a client's message limit (16 MiB by default in ADBC, pyarrow and grpc-java).
     * A single row larger than this fails its DoGet with RESOURCE_EXHAUSTED naming the limit. At least 64 KiB.
     */
    public Builder maxResultMessageBytes(int bytes) {
      if (bytes < ResultMessages.MIN_MAX_BYTES) {
        throw new IllegalArgumentException("maxResultMessageBytes must be at least " + ResultMessages.MIN_MAX_BYTES
            + ", not " + bytes);
      }
      this.maxResultMessageBytes = bytes;
      return this;
    }

    /**
     * The most statement handles (prepared, or planned and not yet read) one session keeps, and the bytes of their
     * SQL (defaults 1,024 and 64 MiB). Past either, the session's least recently used handle is closed, and answers
     * NOT_FOUND saying so: a new statement is never refused for want of room.
     */
    public Builder maxStatementsPerSession(int count, long sqlBytes) {
      this.maxStatementsPerSession = Math.toIntExact(positive(count, "maxStatementsPerSession"));
      this.maxStatementBytesPerSession = positive(sqlBytes, "the statement bytes per session");
      return this;
    }

    /** As {@link #maxStatementsPerSession} over all sessions (defaults 16,384 and 512 MiB). */
    public Builder maxStatements(int count, long sqlBytes) {
      this.maxStatements = Math.toIntExact(positive(count, "maxStatements"));
      this.maxStatementBytes = positive(sqlBytes, "the statement bytes of the server");
      return this;
    }

    private static long positive(long value, String what) {
      if (value < 1) {
        throw new IllegalArgumentException(what + " must be positive, not " + value);
      }
      return value;
    }

    public ThallusFlightSqlServer build() {
      return new ThallusFlightSqlServer(this);
    }
  }
}
