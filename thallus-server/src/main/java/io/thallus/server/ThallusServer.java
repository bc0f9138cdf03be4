package io.thallus.server;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.thallus.Location;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.Tls;
import io.thallus.engine.QueryEngine;
import io.thallus.internal.protocol.FrameDecoder;
import io.thallus.internal.protocol.MessageCodec;
import io.thallus.internal.protocol.Protocol;
import io.thallus.internal.server.CredentialBudgets;
import io.thallus.internal.server.DataRoot;
import io.thallus.internal.server.EngineThreadPool;
import io.thallus.internal.server.FirstByte;
import io.thallus.internal.server.HandshakeHandler;
import io.thallus.internal.server.ProducerPool;
import io.thallus.internal.server.ServerConnection;
import io.thallus.internal.server.ServerContext;
import io.thallus.internal.server.StreamRegistry;
import io.thallus.internal.Transports;
import io.thallus.spi.Deadline;
import io.thallus.spi.ServerTransport;
import io.thallus.spi.Transport;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.handler.timeout.IdleStateHandler;
import io.thallus.internal.server.BatchSizeEstimator;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;

/**
 * A Thallus server: runs SQL in its query engine and streams the results to clients over the transports it has.
 * The engine is the application's choice (thallus-duckdb's {@code DuckDBEngine}, for one); the server closes it
 * when it closes.
 *
 * <pre>{@code
 * try (BufferAllocator allocator = new RootAllocator();
 *      ThallusServer server = ThallusServer.builder(allocator, Location.of("localhost", 0),
 *              DuckDBEngine.builder().filesUnder(Path.of("/data")).build())
 *          .dataRoot(Path.of("/data")).build().start()) {
 *   Location location = server.getLocation();   // the real port
 *   ...
 * }
 * }</pre>
 */
public final class ThallusServer implements AutoCloseable {
  private final Builder settings;
  private final BufferAllocator allocator;
  private final QueryEngine engine;
  private final StreamRegistry registry;
  private final io.thallus.internal.server.ServerMetrics metrics;
  private EventLoopGroup acceptLoop;
  private EventLoopGroup ioLoop;
  private ExecutorService engineThreads;
  private ProducerPool producers;
  private ScheduledExecutorService timers;
  private final List<ServerContext.Started> transports = new ArrayList<>();
  private Channel serverChannel;
  private Location location;
  private boolean closed;
  /** Set once started, cleared when closing begins; read without the lock. */
  private volatile boolean accepting;

  private ThallusServer(Builder settings) {
    this.settings = settings;
    this.allocator = settings.allocator.newChildAllocator("thallus-server", 0, settings.memoryLimit);
    this.engine = settings.engine;
    // The pool is made at start; no statement runs before then.
    this.registry = new StreamRegistry(settings.admission, step -> engineThreads.execute(step));
    this.metrics = new io.thallus.internal.server.ServerMetrics(settings.meterRegistry, registry, allocator);
  }

  /**
   * A server at {@code location} that runs queries in {@code engine}. The server owns the engine from then on: it
   * closes it when it closes (or when it fails to start). An engine that reads files should be limited to the
   * server's {@link Builder#dataRoot} (DuckDBEngine's {@code filesUnder}).
   */
  public static Builder builder(BufferAllocator allocator, Location location, QueryEngine engine) {
    return new Builder(allocator, location, engine);
  }

  /** Binds the port and starts serving. */
  public synchronized ThallusServer start() {
    if (serverChannel != null || closed) {
      throw ThallusException.of(StatusCode.FAILED_PRECONDITION, "server already started or closed");
    }
    try {
      Optional<DataRoot> dataRoot = Optional.ofNullable(settings.dataRoot).map(DataRoot::new);
      io.thallus.internal.server.ServerShards shards = io.thallus.internal.server.ServerShards.of(settings.shards,
          dataRoot);
      acceptLoop = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("thallus-server-accept", true),
          NioIoHandler.newFactory());
      ioLoop = new MultiThreadIoEventLoopGroup(settings.ioThreads, new DefaultThreadFactory("thallus-server-io", true),
          NioIoHandler.newFactory());
      EngineThreadPool pool = new EngineThreadPool(settings.engineThreads);
      engineThreads = pool;
      producers = ProducerPool.of(settings.overlap, Runtime.getRuntime().availableProcessors(), settings.ioThreads,
          engine.queryThreads(), pool::busy);
      ScheduledThreadPoolExecutor timerPool = new ScheduledThreadPoolExecutor(1,
          Thread.ofPlatform().name("thallus-server-timer").daemon().factory());
      timerPool.setRemoveOnCancelPolicy(true);
      timers = timerPool;
      // Streams that wait for their client are parked, not sleeping on a thread: this finds the ones waiting too long.
      timers.scheduleWithFixedDelay(() -> registry.expireIdle(System.nanoTime()), 200, 200, TimeUnit.MILLISECONDS);
      InetSocketAddress bindAddress = new InetSocketAddress(settings.location.host(), settings.location.port());
      ServerContext context = new ServerContext(settings.serverName, allocator, engine, dataRoot, transports,
          engineThreads, timers, settings.ioTimeout, settings.idleTimeout, settings.maxBatchRows,
          // A quarter of the server's budget unless the admission says otherwise: one credential cannot take it all.
          new CredentialBudgets(allocator, settings.admission.maxMemoryPerCredential()
              .orElse(Math.max(1, settings.memoryLimit / 4))),
          settings.authentication, new ServerContext.Limits(settings.maxConnections, settings.admission,
              Protocol.HELLO_MAX_FRAME, settings.maxFrameBytes,
              settings.connectionIdleTimeout, settings.maxStreams, settings.maxStreamsPerConnection,
              settings.maxCreditsPerStream, settings.maxCreditsPerConnection, settings.engineThreadsPerConnection,
              settings.maxSqlBytes, settings.memoryPerClient), settings.tls != null, metrics, producers, shards);
      ServerBootstrap bootstrap = new ServerBootstrap()
          .group(acceptLoop, ioLoop)
          .channel(NioServerSocketChannel.class)
          .childOption(ChannelOption.TCP_NODELAY, true)
          // A client that stops reading makes the channel unwritable past the high mark; its streams then wait.
          .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(8 << 20, 16 << 20))
          .childOption(ChannelOption.MESSAGE_SIZE_ESTIMATOR, BatchSizeEstimator.INSTANCE)
          .childHandler(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {
              if (settings.tls != null) {
                ch.pipeline().addLast("tls", settings.tls.context().newHandler(ch.alloc()));
              }
              ch.pipeline()
                  .addLast("first-byte", new FirstByte())
                  // Small until HELLO has authenticated the client; the handler raises it then.
                  .addLast("frames", new FrameDecoder(Math.min(Protocol.HELLO_MAX_FRAME, settings.maxFrameBytes)))
                  .addLast("decoder", new MessageCodec.Decoder())
                  .addLast("encoder", MessageCodec.Encoder.INSTANCE)
                  .addLast("idle", new IdleStateHandler(settings.connectionIdleTimeout.toMillis(), 0, 0,
                      TimeUnit.MILLISECONDS))
                  .addLast("connection", new HandshakeHandler(context, registry));
            }
          });
      ChannelFuture binding = bootstrap.bind(bindAddress).awaitUninterruptibly();
      if (!binding.isSuccess()) {
        throw ThallusException.of(StatusCode.UNAVAILABLE, "cannot listen on " + settings.location.host() + ":"
            + settings.location.port() + ": " + binding.cause().getMessage(), binding.cause());
      }
      serverChannel = binding.channel();
      InetSocketAddress bound = (InetSocketAddress) serverChannel.localAddress();
      location = Location.of(settings.location.host(), bound.getPort());
      for (Transport transport : Transports.enabled(settings.transports)) {
        ServerTransport server = transport.startServer(
            new ServerTransport.Context(allocator, bound, settings.ioTimeout, settings.memoryPerClient,
                settings.admission.handshakeTimeout()));
        transports.add(new ServerContext.Started(transport, server));
      }
      accepting = true;
      return this;
    } catch (RuntimeException e) {
      close();
      if (e instanceof ThallusException) {
        throw e;
      }
      throw ThallusException.of(StatusCode.UNAVAILABLE,
          "cannot start the server on " + settings.location + ": " + e.getMessage(), e);
    }
  }

  /** Where clients reach this server (with the real port when it was started on port 0). */
  public synchronized Location getLocation() {
    if (location == null) {
      throw ThallusException.of(StatusCode.FAILED_PRECONDITION, "server not started");
    }
    return location;
  }

  /** Whether the server takes queries now: started, and not shutting down. Never waits (a health check asks it). */
  public boolean isAccepting() {
    return accepting && !registry.isShuttingDown();
  }

  /** The names of the transports this server offers. */
  public synchronized List<String> transports() {
    // A TLS server refuses the transports whose bodies travel outside the TLS connection: it does not offer them
    // (so a Flight SQL FlightInfo built from this list names no lane a client would be refused).
    return transports.stream().filter(t -> settings.tls == null || t.transport().confidentialUnderTls())
        .map(t -> t.transport().name()).toList();
  }

  /**
   * What the server holds in Arrow memory now, under its {@code memoryLimit}: in total, the part its client
   * connections hold (batches being produced, frames being written, bodies the clients have not released), and the
   * most it has held at once since it started.
   */
  public record MemoryUse(long allocatedBytes, long limitBytes, long connectionBytes, long peakBytes) {}

  /** The server's memory now: for monitoring, and to see that it returns to zero once clients have gone. */
  public MemoryUse memoryUse() {
    long connections = 0;
    for (BufferAllocator child : allocator.getChildAllocators()) {
      // A connection's memory lies directly under the server's, or under its credential's budget.
      if (child.getName().startsWith(ServerConnection.ALLOCATOR_PREFIX)
          || child.getName().startsWith(CredentialBudgets.PREFIX)) {
        connections += child.getAllocatedMemory();
      }
    }
    return new MemoryUse(allocator.getAllocatedMemory(), allocator.getLimit(), connections,
        allocator.getPeakMemoryAllocation());
  }

  /**
   * Stops accepting, tells every open stream the server is shutting down, waits up to the shutdown timeout for
   * them to release their memory, and frees everything. Fails if memory is still outstanding at the end.
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    accepting = false;
    Deadline deadline = Deadline.after(settings.shutdownTimeout);
    if (serverChannel != null) {
      serverChannel.close().awaitUninterruptibly(deadline.remainingMillis());
    }
    registry.shutDown();
    while (registry.streamCount() > 0 && !deadline.isExpired()) {
      sleepBriefly();
    }
    for (io.netty.channel.Channel connection : registry.connections()) {
      // Closed without a word: its streams were told above.
      connection.close();
    }
    if (engineThreads != null) {
      engineThreads.shutdown();
      awaitTermination(engineThreads, deadline);
    }
    if (producers != null) {
      producers.close(deadline);
    }
    if (timers != null) {
      timers.shutdownNow();
    }
    if (ioLoop != null) {
      ioLoop.shutdownGracefully(0, deadline.remainingMillis(), TimeUnit.MILLISECONDS)
          .awaitUninterruptibly(deadline.remainingMillis());
    }
    if (acceptLoop != null) {
      acceptLoop.shutdownGracefully(0, deadline.remainingMillis(), TimeUnit.MILLISECONDS)
          .awaitUninterruptibly(deadline.remainingMillis());
    }
    for (ServerContext.Started started : transports) {
      started.server().close();
    }
    engine.close();
    metrics.close();
    allocator.close();
  }

  private static void awaitTermination(ExecutorService executor, Deadline deadline) {
    try {
      executor.awaitTermination(deadline.remainingMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void sleepBriefly() {
    try {
      Thread.sleep(5);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Typed server settings. */
  public static final class Builder {
    private final BufferAllocator allocator;
    private final Location location;
    private Path dataRoot;
    private final List<ShardDeclaration> shards = new ArrayList<>();
    private final QueryEngine engine;
    private List<String> transports = List.of();
    private int maxFrameBytes = Protocol.DEFAULT_SERVER_MAX_FRAME;
    private int maxBatchRows = 1 << 24;
    private long memoryLimit = defaultMemoryLimit();
    private long memoryPerClient = 1L << 30;
    private int ioThreads = 1;
    private Duration ioTimeout = Duration.ofSeconds(60);
    private Duration idleTimeout = Duration.ofMinutes(10);
    private Duration shutdownTimeout = Duration.ofSeconds(10);
    private String serverName = "thallus";
    private Authentication authentication = Authentication.none();
    private io.micrometer.core.instrument.MeterRegistry meterRegistry =
        new io.micrometer.core.instrument.composite.CompositeMeterRegistry();
    private Tls tls;
    private int maxConnections = 1024;
    private int maxStreamsPerConnection = 64;
    private int maxSqlBytes = 1 << 20;
    private Admission admission = Admission.defaults();
    private Duration connectionIdleTimeout = Duration.ofHours(1);
    private int maxStreams = 256;
    private int maxCreditsPerStream = 256;
    private int maxCreditsPerConnection = 1024;
    private int engineThreads = Math.max(16, 4 * Runtime.getRuntime().availableProcessors());
    private int engineThreadsPerConnection = 2;
    private Overlap overlap = Overlap.auto();

    private Builder(BufferAllocator allocator, Location location, QueryEngine engine) {
      this.allocator = Objects.requireNonNull(allocator, "allocator");
      this.location = Objects.requireNonNull(location, "location");
      this.engine = Objects.requireNonNull(engine, "engine");
    }

    /** The folder datasets are served from; without one, queries may not name a dataset. */
    public Builder dataRoot(Path root) {
      this.dataRoot = root;
      return this;
    }

    /**
     * Declares that this server holds part {@code partId} of the sharded dataset {@code name}, at {@code path} under
     * its {@link #dataRoot} (docs/sharding.md): a DESCRIBE of {@code name} answers every part declared for it, with
     * checksums, so that a client reading the dataset from several servers learns which holds what. Checked when the
     * server starts (the path must exist inside the data root).
     */
    public Builder shard(String name, String partId, String path) {
      this.shards.add(new ShardDeclaration(name, partId, path));
      return this;
    }

    /** Only these transports, by name (default: every transport found that can run here). */
    public Builder transports(List<String> names) {
      this.transports = List.copyOf(names);
      return this;
    }

    /** The largest frame a client may send (SQL text included). */
    public Builder maxFrameBytes(int bytes) {
      this.maxFrameBytes = positive(bytes, "maxFrameBytes");
      return this;
    }

    /** The largest batch a client may ask for. */
    public Builder maxBatchRows(int rows) {
      this.maxBatchRows = positive(rows, "maxBatchRows");
      return this;
    }

    /** The most memory the server's streams may hold at once (default: a quarter of the machine's memory). */
    public Builder memoryLimit(long bytes) {
      this.memoryLimit = positive(bytes, "memoryLimit");
      return this;
    }

    /**
     * The most memory a transport may hold for one client: shared-memory segments, batches kept until the client
     * releases them. At the limit a stream waits for releases, then fails with RESOURCE_EXHAUSTED.
     */
    public Builder memoryPerClient(long bytes) {
      this.memoryPerClient = positive(bytes, "memoryPerClient");
      return this;
    }

    /** Event-loop threads for control connections. */
    public Builder ioThreads(int threads) {
      this.ioThreads = positive(threads, "ioThreads");
      return this;
    }

    /** How long one write of a batch body may take before the stream fails. */
    public Builder ioTimeout(Duration timeout) {
      this.ioTimeout = Objects.requireNonNull(timeout);
      return this;
    }

    /** How long a stream may wait for the client to ask for its next batch. */
    public Builder idleTimeout(Duration timeout) {
      this.idleTimeout = Objects.requireNonNull(timeout);
      return this;
    }

    /** How long {@link #close()} waits for streams to finish. */
    public Builder shutdownTimeout(Duration timeout) {
      this.shutdownTimeout = Objects.requireNonNull(timeout);
      return this;
    }

    /**
     * Where the server reports its metrics (clients, streams, queries by outcome and latency, batches and bytes per
     * transport, credit stalls, batch memory and budget), as Micrometer meters named {@code thallus.*}; default:
     * nowhere. The meters leave the registry when the server closes.
     */
    public Builder meterRegistry(io.micrometer.core.instrument.MeterRegistry registry) {
      this.meterRegistry = Objects.requireNonNull(registry, "registry");
      return this;
    }

    /** Who may connect (default: anyone); checked at HELLO, before a client can open a stream. */
    public Builder authentication(Authentication value) {
      this.authentication = Objects.requireNonNull(value);
      return this;
    }

    /** TLS on the control connection ({@link Tls#server}); the server then offers only ipc, shm and cma. */
    public Builder tls(Tls server) {
      this.tls = Objects.requireNonNull(server);
      return this;
    }

    /** Clients connected at once (default 1024); one more is refused with RESOURCE_EXHAUSTED. */
    public Builder maxConnections(int count) {
      this.maxConnections = positive(count, "maxConnections");
      return this;
    }

    /** Streams one client may have open at once (default 64); one more is refused with RESOURCE_EXHAUSTED. */
    public Builder maxStreamsPerConnection(int count) {
      this.maxStreamsPerConnection = positive(count, "maxStreamsPerConnection");
      return this;
    }

    /** Longest SQL text a client may send, in UTF-8 bytes (default 1 MiB). */
    public Builder maxSqlBytes(int bytes) {
      this.maxSqlBytes = positive(bytes, "maxSqlBytes");
      return this;
    }

    /**
     * Who gets in and how much each may hold (default {@link Admission#defaults()}): the deadline and cap for
     * connections that have not authenticated, and the per-credential and per-address quotas. Checked together with
     * {@link #maxConnections}, atomically.
     */
    public Builder admission(Admission policy) {
      this.admission = Objects.requireNonNull(policy, "admission");
      return this;
    }

    /** How long an authenticated connection with no open stream may send nothing (default 1 h); then it is closed. */
    public Builder connectionIdleTimeout(Duration timeout) {
      this.connectionIdleTimeout = positive(timeout, "connectionIdleTimeout");
      return this;
    }

    /** Streams open on the whole server at once (default 256); one more is refused with RESOURCE_EXHAUSTED. */
    public Builder maxStreams(int count) {
      this.maxStreams = positive(count, "maxStreams");
      return this;
    }

    /** Credits one stream may hold (default 256): batches it may send ahead of the client's reading. */
    public Builder maxCreditsPerStream(int count) {
      this.maxCreditsPerStream = positive(count, "maxCreditsPerStream");
      return this;
    }

    /** Credits one client may hold over all its streams (default 1024). */
    public Builder maxCreditsPerConnection(int count) {
      this.maxCreditsPerConnection = positive(count, "maxCreditsPerConnection");
      return this;
    }

    /**
     * Threads that run queries and produce batches (default: 4 per core, at least 16). A stream holds one only while
     * it works; one waiting for its client holds none.
     */
    public Builder engineThreads(int count) {
      this.engineThreads = positive(count, "engineThreads");
      return this;
    }

    /** Engine threads one client's streams may hold at once (default 2); its other streams wait their turn. */
    public Builder engineThreadsPerConnection(int count) {
      this.engineThreadsPerConnection = positive(count, "engineThreadsPerConnection");
      return this;
    }

    /**
     * Whether a large result's next batch is made on a producer thread while its stream sends the last one (default
     * {@link Overlap#auto()}: where the machine has cores to spare; never on two cores).
     */
    public Builder overlap(Overlap value) {
      this.overlap = Objects.requireNonNull(value, "overlap");
      return this;
    }

    public Builder serverName(String name) {
      this.serverName = Objects.requireNonNull(name);
      return this;
    }

    public ThallusServer build() {
      return new ThallusServer(this);
    }

    private static int positive(int value, String name) {
      if (value <= 0) {
        throw new IllegalArgumentException(name + " must be positive, got " + value);
      }
      return value;
    }

    private static Duration positive(Duration value, String name) {
      if (value.isNegative() || value.isZero()) {
        throw new IllegalArgumentException(name + " must be positive, got " + value);
      }
      return value;
    }

    /** A quarter of the machine's memory: room for DuckDB's own memory and the JVM beside the batches. */
    private static long defaultMemoryLimit() {
      if (java.lang.management.ManagementFactory.getOperatingSystemMXBean()
          instanceof com.sun.management.OperatingSystemMXBean os && os.getTotalMemorySize() > 0) {
        return os.getTotalMemorySize() / 4;
      }
      return 4L << 30;
    }

    private static long positive(long value, String name) {
      if (value <= 0) {
        throw new IllegalArgumentException(name + " must be positive, got " + value);
      }
      return value;
    }
  }
}
