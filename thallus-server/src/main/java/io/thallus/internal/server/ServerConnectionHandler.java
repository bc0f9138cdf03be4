package io.thallus.internal.server;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import io.thallus.IngestMode;
import io.thallus.Status;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.internal.batch.BatchSender;
import io.thallus.internal.protocol.FrameDecoder;
import io.thallus.internal.protocol.Message;
import io.thallus.internal.protocol.Protocol;
import io.thallus.internal.protocol.QueryParameters;
import io.thallus.engine.QuerySpec;
import io.thallus.engine.EngineSession;
import io.thallus.spi.IngestFetcher;
import io.thallus.engine.IngestSpec;
import io.thallus.spi.ServerSession;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.BufferAllocator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client connection on the server: the HELLO handshake, then OPEN/NEXT/CANCEL/CLOSE for its streams. Runs on
 * the connection's event loop and never blocks it: queries run on the engine threads.
 *
 * <p>Before HELLO has authenticated it, a connection counts as pending (not as a client), may send only a small
 * frame, and has {@code handshakeTimeout} to finish. After it, a connection with no open stream that stays silent
 * for {@code connectionIdleTimeout} is closed.
 */
public final class ServerConnectionHandler extends SimpleChannelInboundHandler<Message> {
  private static final Logger LOG = LoggerFactory.getLogger(ServerConnectionHandler.class);
  private static final AtomicLong IDS = new AtomicLong();
  private static final io.thallus.internal.RateLimitedLog FAILED_LOGINS = new io.thallus.internal.RateLimitedLog(LOG,
      java.time.Duration.ofSeconds(1));
  /** The name of each connection's allocator starts so. */
  public static final String ALLOCATOR_PREFIX = "connection-";
  /** How long an oversized frame is read and thrown away after its ERROR, so the client can read the ERROR. */
  private static final long DRAIN_MILLIS = 5_000;

  private final ServerContext context;
  private final long id = IDS.incrementAndGet();
  private final Map<Integer, ServerStream> streams = new ConcurrentHashMap<>();
  /** Streams the client has closed whose threads are still winding down: they no longer count against its limit. */
  private final Set<Integer> closing = ConcurrentHashMap.newKeySet();
  /** This connection's ingests, by stream id (one id space with the streams). */
  private final Map<Integer, ServerIngest> ingests = new ConcurrentHashMap<>();
  /** The write direction's fetcher, made at the first ingested body that travels outside its frame. */
  private IngestFetcher ingestFetcher;
  private Map<String, String> ingestParameters = Map.of();
  private volatile boolean transportSerializes;
  private volatile Channel channel;
  private volatile ServerSession session;
  /** Sends the batches of this connection's streams; made with the session. */
  private volatile BatchSender sender;
  /** The chosen transport's name, for metrics. */
  private volatile String transportName;
  private volatile EngineLane lane;
  private ScheduledFuture<?> handshakeTimer;
  /** Holds what this connection's streams produce; it outlives them while the client still holds batches. */
  /** Made at HELLO, inside the budget of {@link #budgetCredential}; null before. */
  private BufferAllocator allocator;
  /** The credential whose budget {@link #allocator} lies in (null: the server's own). */
  private String budgetCredential;
  private boolean inactive;
  private boolean sessionClosed;
  /** This client's session in the engine, opened at its first query. Guarded by this. */
  private EngineSession engineSession;
  /** Whether any byte has come from the client: a pending connection that has spoken is the last to be let go. */
  private volatile boolean spoken;
  /** Frames queued for the event loop by any thread, written there in order (see {@link #flush}). */
  private final Queue<Message> outbox = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean drainScheduled = new AtomicBoolean();
  private final ServerDescribes describes;

  public ServerConnectionHandler(ServerContext context) {
    this.context = context;
    this.describes = new ServerDescribes(context, step -> lane().submit(step), this::engineSession, this::allocator,
        this::send, this::failConnection, () -> context.registry().isShuttingDown());
  }

  long id() {
    return id;
  }

  BatchSender sender() {
    return sender;
  }

  String transportName() {
    return transportName;
  }

  BufferAllocator allocator() {
    return allocator;
  }

  EngineLane lane() {
    return lane;
  }

  boolean hasSpoken() {
    return spoken;
  }

  /** Sits before the frame decoder and notes the first byte a connection sends, then steps aside. */
  public static final class FirstByte extends ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (ctx.pipeline().get("connection") instanceof ServerConnectionHandler connection) {
        connection.spoken = true;
      }
      ctx.pipeline().remove(this);
      ctx.fireChannelRead(msg);
    }
  }

  /** Whether the control connection takes more bytes now; a stream produces nothing while it does not. */
  boolean isWritable() {
    Channel ch = channel;
    return ch == null || ch.isWritable() || !ch.isActive();
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    channel = ctx.channel();
    lane = new EngineLane(context.engineThreads(), context.limits().engineThreadsPerConnection());
    Optional<ServerConnectionHandler> crowdedOut = context.registry().addPending(this);
    crowdedOut.ifPresent(oldest -> oldest.failConnection(Status.of(StatusCode.RESOURCE_EXHAUSTED,
        "too many connections are waiting to authenticate (the most is "
            + context.limits().admission().maxStrangers() + ", maxStrangers); this one waited longest")));
    if (context.registry().isShuttingDown()) {
      failConnection(Status.of(StatusCode.UNAVAILABLE, "the server is shutting down"));
      return;
    }
    long timeoutMillis = context.limits().admission().handshakeTimeout().toMillis();
    handshakeTimer = ctx.executor().schedule(() -> {
      if (session == null) {
        failConnection(Status.of(StatusCode.DEADLINE_EXCEEDED,
            "no valid HELLO within " + timeoutMillis + " ms of connecting"));
      }
    }, timeoutMillis, TimeUnit.MILLISECONDS);
  }

  @Override
  protected void channelRead0(ChannelHandlerContext ctx, Message message) {
    if (message instanceof Message.Hello hello) {
      onHello(ctx, hello);
      return;
    }
    if (session == null) {
      failConnection(Status.of(StatusCode.FAILED_PRECONDITION,
          "expected HELLO first, got " + message.type()));
      return;
    }
    switch (message) {
      case Message.Open open -> onOpen(open);
      case Message.Next next -> onNext(next);
      case Message.Cancel cancel -> abortStream(cancel.streamId(),
          Status.of(StatusCode.CANCELLED, "stream " + cancel.streamId() + " cancelled by the client"), true);
      case Message.Close close -> closeStream(close.streamId());
      case Message.Ingest ingest -> onIngest(ingest);
      case Message.Describe describe -> describes.start(describe,
          id -> streams.containsKey(id) || ingests.containsKey(id), streams.size() - closing.size() + ingests.size());
      case Message.Batch batch -> onIngestBatch(batch);
      case Message.End end -> {
        ServerIngest ingest = ingests.get(end.streamId());
        // An END for an ingest that has just failed crossed its ERROR on the wire: nothing is left to end.
        if (ingest != null) {
          ingest.onEnd(end);
        }
      }
      default -> failConnection(Status.of(StatusCode.PROTOCOL_ERROR,
          "a client does not send " + message.type()));
    }
  }

  private void onHello(ChannelHandlerContext ctx, Message.Hello hello) {
    if (session != null) {
      failConnection(Status.of(StatusCode.PROTOCOL_ERROR, "HELLO sent twice"));
      return;
    }
    if (hello.version() != Protocol.VERSION) {
      failConnection(Status.of(StatusCode.UNIMPLEMENTED, "protocol version " + hello.version()
          + " is not supported; this server speaks version " + Protocol.VERSION));
      return;
    }
    Optional<String> credential = context.authentication().credential(hello.credentials());
    if (credential.isEmpty()) {
      // Rate-limited: a guesser (or a Flight session trying a Basic password as the token) can fail thousands a second.
      FAILED_LOGINS.warn("authentication", "connection {} from {} failed authentication", id, channel.remoteAddress());
      // Which part was wrong is not said: that would help a guesser.
      failConnection(Status.of(StatusCode.UNAUTHENTICATED,
          "authentication failed: this server needs a valid token, or a user name and password"));
      return;
    }
    InetSocketAddress remote = (InetSocketAddress) channel.remoteAddress();
    // Without authentication every client is "anyone": only its address tells clients apart.
    StreamRegistry.Promotion promotion = context.registry().promote(this, context.limits().maxConnections(),
        context.authentication().isRequired() ? credential.get() : null, remote.getAddress().getHostAddress());
    if (promotion.refusal().isPresent()) {
      failConnection(Status.of(StatusCode.RESOURCE_EXHAUSTED, promotion.refusal().get()));
      return;
    }
    // The connection's steps run through its credential's lane, shared with that credential's other connections.
    lane = new EngineLane(promotion.lane(), context.limits().engineThreadsPerConnection());
    // Its memory lies inside its credential's budget, shared the same way; made only now, once the credential is known.
    budgetCredential = context.authentication().isRequired() ? credential.get() : null;
    allocator = context.budgets().take(budgetCredential).newChildAllocator(ALLOCATOR_PREFIX + id, 0,
        context.limits().memoryPerClient());
    List<String> unavailable = new ArrayList<>();
    for (String name : hello.transports()) {
      Optional<ServerContext.Started> started = context.transport(name);
      if (started.isEmpty()) {
        continue;
      }
      if (context.tls() && !started.get().transport().confidentialUnderTls()) {
        unavailable.add(name + " (its batch bodies would travel outside TLS)");
        continue;
      }
      try {
        ServerSession accepted = started.get().server().accept(remote, hello.parameters(), allocator);
        sender = new BatchSender(accepted, accepted, started.get().transport().serializesBatches(),
            (header, inline) -> {
              // A body outside its frame may wait for the client to read the frame (tcp's data connection): the frame
              // goes now. One inside its frame waits for the stream's flush (a short batch, likely the last, leaves
              // with END).
              sendUnflushed(new Message.Batch(header, inline));
              if (!inline.isReadable()) {
                flush();
              }
            },
            allocator, context.ioTimeout(), context.limits().memoryPerClient(),
            () -> context.budgets().budgetName(allocator));
        transportName = started.get().transport().name();
        transportSerializes = started.get().transport().serializesBatches();
        session = accepted;
        handshakeTimer.cancel(false);
        // Authenticated: from now on the client may send frames as large as the server allows.
        if (ctx.pipeline().get("frames") instanceof FrameDecoder frames) {
          frames.setMaxFrameLength(context.limits().maxFrameBytes());
        }
        Map<String, String> parameters = new HashMap<>(accepted.welcomeParameters());
        parameters.put(Protocol.SERVER_MAX_FRAME_BYTES, Integer.toString(context.limits().maxFrameBytes()));
        parameters.put(Protocol.SERVER_MAX_SQL_BYTES, Integer.toString(context.limits().maxSqlBytes()));
        parameters.put(Protocol.SERVER_MAX_CREDITS, Integer.toString(context.limits().maxCreditsPerStream()));
        send(new Message.Welcome(Protocol.VERSION, name, parameters, context.serverName()));
        return;
      } catch (ThallusException e) {
        unavailable.add(name + " (" + e.status().description() + ")");
      }
    }
    List<String> serverHas = context.transports().stream().map(t -> t.transport().name()).toList();
    failConnection(Status.of(StatusCode.UNIMPLEMENTED, "no transport in common: the client offers "
        + hello.transports() + ", this server has " + serverHas
        + (unavailable.isEmpty() ? "" : "; could not start " + unavailable)));
  }

  private void onOpen(Message.Open open) {
    int streamId = open.streamId();
    if (streamId <= 0) {
      // An ERROR on stream 0 means "the connection failed": answering a stream 0 would read as that.
      failConnection(Status.of(StatusCode.PROTOCOL_ERROR, "stream id " + streamId
          + " is not allowed: stream ids start at 1 (0 is reserved for connection errors)"));
      return;
    }
    ServerStream stream = null;
    try {
      describes.checkFree(streamId);
      if (streams.containsKey(streamId)) {
        throw ThallusException.of(StatusCode.FAILED_PRECONDITION, "stream id " + streamId + " is in use");
      }
      if (open.batchRows() < 1 || open.batchRows() > context.maxBatchRows()) {
        throw ThallusException.of(StatusCode.INVALID_ARGUMENT,
            "batch rows must be within 1.." + context.maxBatchRows() + ", got " + open.batchRows());
      }
      checkCredits(0, open.credits());
      if (open.sql().isBlank()) {
        throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "empty SQL");
      }
      int sqlBytes = io.netty.buffer.ByteBufUtil.utf8Bytes(open.sql());
      if (sqlBytes > context.limits().maxSqlBytes()) {
        throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "SQL text of " + sqlBytes
            + " bytes is over this server's limit of " + context.limits().maxSqlBytes());
      }
      int openStreams = streams.size() - closing.size();
      if (openStreams >= context.limits().maxStreamsPerConnection()) {
        throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, "this client already has "
            + openStreams + " streams open, the most this server allows; close one first");
      }
      Optional<Path> dataset = Optional.empty();
      if (!open.dataset().isEmpty()) {
        DataRoot root = context.dataRoot().orElseThrow(() -> ThallusException.of(StatusCode.PERMISSION_DENIED,
            "this server serves no datasets (it was started without a data root)"));
        dataset = Optional.of(root.resolve(open.dataset()));
      }
      if (context.registry().isShuttingDown()) {
        throw ThallusException.of(StatusCode.UNAVAILABLE, "the server is shutting down");
      }
      QuerySpec spec = new QuerySpec(open.sql(), dataset, open.batchRows(),
          QueryParameters.forEngine(open.parameters()), open.schemaOnly(), open.options(), open.parameterRows());
      stream = new ServerStream(this, context, streamId, spec, open.credits());
      if (!context.registry().add(stream, context.limits().maxStreams())) {
        throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, "the server has its maximum of "
            + context.limits().maxStreams() + " streams open; try again later");
      }
      streams.put(streamId, stream);
      stream.scheduleTimeout(open.timeoutMillis());
      stream.start();
    } catch (ThallusException e) {
      send(new Message.Error(streamId, e.code(), e.status().description()));
    }
  }

  private void onIngest(Message.Ingest request) {
    int streamId = request.streamId();
    if (streamId <= 0) {
      failConnection(Status.of(StatusCode.PROTOCOL_ERROR, "stream id " + streamId
          + " is not allowed: stream ids start at 1 (0 is reserved for connection errors)"));
      return;
    }
    try {
      describes.checkFree(streamId);
      if (streams.containsKey(streamId) || ingests.containsKey(streamId)) {
        throw ThallusException.of(StatusCode.FAILED_PRECONDITION, "stream id " + streamId + " is in use");
      }
      IngestMode mode = IngestMode.fromWireValue(request.mode());
      if (mode == null) {
        throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "ingest mode " + request.mode()
            + " is unknown: 0 create, 1 append, 2 replace");
      }
      io.thallus.internal.protocol.TableNames.check(request.table());
      if (request.credits() < 1) {
        throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "an ingest needs at least 1 credit, got "
            + request.credits());
      }
      // Batches inside frames are held from their arrival: their credits keep them within half the client's budget.
      long framesInBudget = context.limits().memoryPerClient() / (2L * context.limits().maxFrameBytes());
      int credits = (int) Math.max(1, Math.min(framesInBudget,
          Math.min(request.credits(), context.limits().maxCreditsPerStream())));
      org.apache.arrow.vector.types.pojo.Schema schema;
      try {
        schema = org.apache.arrow.vector.types.pojo.Schema.deserializeMessage(
            java.nio.ByteBuffer.wrap(request.schema()));
      } catch (RuntimeException e) {
        throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "the ingest's schema is not an Arrow IPC schema "
            + "message: " + e.getMessage(), e);
      }
      if (schema.getFields().isEmpty()) {
        throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "the ingest's schema has no columns");
      }
      int open = streams.size() - closing.size() + ingests.size();
      if (open >= context.limits().maxStreamsPerConnection()) {
        throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, "this client already has " + open
            + " streams open, the most this server allows; close one first");
      }
      if (context.registry().isShuttingDown()) {
        throw ThallusException.of(StatusCode.UNAVAILABLE, "the server is shutting down");
      }
      Map<String, String> options = new HashMap<>();
      Map<String, String> transportParameters = new HashMap<>();
      String prefix = transportName + ".";
      request.options().forEach((key, value) -> (key.startsWith(prefix) ? transportParameters : options)
          .put(key, value));
      synchronized (this) {
        if (!transportParameters.isEmpty()) {
          ingestParameters = Map.copyOf(transportParameters);
        }
      }
      ServerIngest ingest = new ServerIngest(this, context, streamId,
          new IngestSpec(request.table(), mode, schema, options), credits, this::ingestFetcher);
      ingests.put(streamId, ingest);
      ingest.start(request.timeoutMillis());
    } catch (ThallusException e) {
      send(new Message.Error(streamId, e.code(), e.status().description()));
    }
  }

  private void onIngestBatch(Message.Batch batch) {
    ServerIngest ingest = ingests.get(batch.header().streamId());
    if (ingest == null) {
      // An ingest that has failed or been cancelled drops what the client had sent meanwhile; a body outside its
      // frame is still fetched (and freed), so the transport stays in step with the frames.
      boolean outOfLine = !transportSerializes && !batch.inline().isReadable() && batch.header().bufferBytes() > 0;
      if (outOfLine) {
        try {
          ServerIngest.drop(ingestFetcher(), batch.header());
        } catch (ThallusException e) {
          failConnection(e.status());
        }
      }
      return;
    }
    try {
      ingest.onBatch(batch.header(), batch.inline(), transportSerializes);
    } catch (ThallusException e) {
      ingest.abort(e.status(), true);
      if (e.code() == StatusCode.PROTOCOL_ERROR) {
        // A client that breaks the credit rules may also have sent bodies nobody reads: its connection ends.
        failConnection(e.status());
      }
    } catch (org.apache.arrow.memory.OutOfMemoryException e) {
      ingest.abort(Status.of(StatusCode.RESOURCE_EXHAUSTED, context.budgets().budgetName(allocator) + " has no room "
          + "for batch " + batch.header().batchId() + " of ingest " + ingest.id() + "; nothing was written"), true);
    } catch (RuntimeException e) {
      ingest.abort(Status.of(StatusCode.PROTOCOL_ERROR, "bad batch " + batch.header().batchId()
          + " of ingest " + ingest.id() + ": " + e.getMessage()), true);
    }
  }

  /** The write direction's fetcher for this connection, made once. */
  private IngestFetcher ingestFetcher() {
    synchronized (this) {
      if (sessionClosed) {
        throw ThallusException.of(StatusCode.UNAVAILABLE, "the connection has closed");
      }
      if (ingestFetcher == null) {
        ingestFetcher = session.ingestFetcher(ingestParameters);
      }
      return ingestFetcher;
    }
  }

  /** Called by an ingest when it has answered and released what it held. */
  void ingestDone(ServerIngest ingest) {
    ingests.remove(ingest.id(), ingest);
    closeSessionIfIdle();
  }

  /**
   * Refuses credits over the server's maxima: credits are what a stream may send ahead of the client, so they bound
   * what a client that reads nothing makes the server hold.
   */
  private void checkCredits(int current, int more) {
    if (more < 0) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "negative credits " + more);
    }
    long stream = (long) current + more;
    if (stream > context.limits().maxCreditsPerStream()) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "a stream may hold at most "
          + context.limits().maxCreditsPerStream() + " credits (maxCreditsPerStream); this grant makes " + stream);
    }
    long connection = more;
    for (ServerStream open : streams.values()) {
      connection += open.credits();
    }
    for (ServerIngest open : ingests.values()) {
      connection += open.credits();
    }
    if (connection > context.limits().maxCreditsPerConnection()) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "a client may hold at most "
          + context.limits().maxCreditsPerConnection() + " credits over all its streams (maxCreditsPerConnection);"
          + " this grant makes " + connection);
    }
  }

  private void onNext(Message.Next next) {
    ServerStream stream = streams.get(next.streamId());
    for (long batchId : next.releases()) {
      sender.released(next.streamId(), batchId);
    }
    if (stream != null) {
      try {
        checkCredits(stream.credits(), next.credits());
        stream.grant(next.credits());
      } catch (ThallusException e) {
        stream.abort(e.status(), true);
      }
    }
    if (next.releases().length > 0) {
      // Released memory may let a stream look ahead again.
      wakeStreams();
    }
    // A NEXT for a stream that has just ended crossed its END on the wire: nothing left to grant.
  }

  private void wakeStreams() {
    for (ServerStream stream : streams.values()) {
      stream.wake();
    }
  }

  private void abortStream(int streamId, Status status, boolean answer) {
    describes.cancel(streamId);
    ServerStream stream = streams.get(streamId);
    if (stream != null) {
      stream.abort(status, answer);
    }
    ServerIngest ingest = ingests.get(streamId);
    if (ingest != null) {
      ingest.abort(answer ? Status.of(StatusCode.CANCELLED, "ingest " + streamId + " cancelled by the client; "
          + "nothing was written") : status, answer);
    }
  }

  private void closeStream(int streamId) {
    if (streams.containsKey(streamId)) {
      closing.add(streamId);
    }
    abortStream(streamId, Status.of(StatusCode.CANCELLED, "stream " + streamId + " closed by the client"), false);
  }

  /** This client's engine session (its transaction, temp tables, settings), opened at the first query. */
  EngineSession engineSession() {
    synchronized (this) {
      if (sessionClosed) {
        throw ThallusException.of(StatusCode.UNAVAILABLE, "the connection has closed");
      }
      if (engineSession == null) {
        engineSession = context.engine().openSession();
      }
      return engineSession;
    }
  }

  /** Called by a stream when it has finished and released what it held. */
  void streamDone(ServerStream stream) {
    streams.remove(stream.id(), stream);
    closing.remove(stream.id());
    context.registry().remove(stream);
    closeSessionIfIdle();
  }

  private void closeSessionIfIdle() {
    boolean last;
    synchronized (this) {
      last = inactive && streams.isEmpty() && ingests.isEmpty() && !sessionClosed;
      sessionClosed |= last;
    }
    if (!last) {
      return;
    }
    EngineSession ended;
    synchronized (this) {
      ended = engineSession;
    }
    if (ended != null) {
      // The client is gone: a transaction it left open rolls back.
      ended.close();
    }
    IngestFetcher fetcher;
    synchronized (this) {
      fetcher = ingestFetcher;
    }
    if (fetcher != null) {
      fetcher.close();
    }
    try {
      BatchSender toClose = sender;
      if (toClose != null) {
        toClose.close();
      }
    } finally {
      closeAllocatorAfterPendingWrites();
    }
  }

  /**
   * Frames a stream queued just before it ended may still wait on the event loop, holding this connection's memory
   * until they are written or dropped; the allocator closes after them, on the same loop.
   */
  private void closeAllocatorAfterPendingWrites() {
    if (allocator == null) {
      return;
    }
    Runnable closeAllocator = () -> {
      // Frames queued and never flushed (none should be) go before the memory they count against.
      dropOutbox();
      try {
        allocator.close();
      } catch (IllegalStateException leak) {
        LOG.error("connection {} leaked memory: {}", id, leak.getMessage());
      } finally {
        context.budgets().giveBack(budgetCredential);
      }
    };
    Channel ch = channel;
    try {
      if (ch == null || ch.eventLoop().inEventLoop()) {
        closeAllocator.run();
      } else {
        ch.eventLoop().execute(closeAllocator);
      }
    } catch (RejectedExecutionException loopGone) {
      closeAllocator.run();
    }
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) {
    if (ctx.channel().isWritable()) {
      wakeStreams();
    }
    ctx.fireChannelWritabilityChanged();
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
    if (event instanceof IdleStateEvent && session != null && streams.isEmpty() && ingests.isEmpty()
        && describes.running() == 0) {
      failConnection(Status.of(StatusCode.DEADLINE_EXCEEDED, "closing a connection that sent nothing for "
          + context.limits().connectionIdleTimeout().toSeconds() + " s and has no stream open"));
      return;
    }
    ctx.fireUserEventTriggered(event);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    synchronized (this) {
      inactive = true;
    }
    if (handshakeTimer != null) {
      handshakeTimer.cancel(false);
    }
    for (ServerStream stream : streams.values()) {
      stream.abort(Status.of(StatusCode.UNAVAILABLE, "the client disconnected"), false);
    }
    for (ServerIngest ingest : ingests.values()) {
      ingest.abort(Status.of(StatusCode.UNAVAILABLE, "the client disconnected; nothing was written"), false);
    }
    describes.cancelAll();
    context.registry().remove(this);
    closeSessionIfIdle();
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    if (cause instanceof FrameDecoder.FrameTooLongException tooLong) {
      failConnectionAfterDraining(ctx, Status.of(StatusCode.PROTOCOL_ERROR, "malformed frame: "
          + tooLong.getMessage()), tooLong.frameLength());
    } else if (cause instanceof DecoderException) {
      Throwable reason = cause.getCause() != null && cause.getMessage() != null
          && cause.getMessage().startsWith(cause.getCause().getClass().getName()) ? cause.getCause() : cause;
      failConnection(Status.of(StatusCode.PROTOCOL_ERROR, "malformed frame: " + reason.getMessage()));
    } else if (cause instanceof IOException) {
      LOG.debug("connection {} lost: {}", id, cause.toString());
      ctx.close();
    } else {
      LOG.error("connection {} failed", id, cause);
      failConnection(Status.of(StatusCode.INTERNAL, "server error: " + cause));
    }
  }

  /** Tells the client why, then closes the connection; its streams end as on a disconnect. */
  void failConnection(Status status) {
    Channel ch = channel;
    if (ch != null && ch.isActive()) {
      ch.writeAndFlush(new Message.Error(0, status.code(), status.description()))
          .addListener(ChannelFutureListener.CLOSE);
    }
  }

  /**
   * Like {@link #failConnection}, for a frame too long to read: the client is most likely still sending it, and a
   * close with unread bytes resets the connection, which can destroy the ERROR before the client reads it. So the
   * rest of the frame is read and thrown away (nothing is kept) until it has all come, or for a few seconds.
   */
  private void failConnectionAfterDraining(ChannelHandlerContext ctx, Status status, long frameBytes) {
    Channel ch = ctx.channel();
    if (!ch.isActive() || ch.pipeline().get("drain") != null) {
      return;
    }
    Drain drain = new Drain(frameBytes);
    ch.pipeline().addBefore("frames", "drain", drain);
    ch.pipeline().remove("decoder");
    ch.pipeline().remove("frames");
    ch.writeAndFlush(new Message.Error(0, status.code(), status.description()));
    drain.closeWhenDone(ch);
  }

  /**
   * Reads and drops what is left of a refused frame, then closes: once it has all come, once the client has sent
   * nothing for a moment, or at the latest after a few seconds.
   */
  private static final class Drain extends ChannelInboundHandlerAdapter {
    private static final long QUIET_NANOS = TimeUnit.MILLISECONDS.toNanos(250);
    private final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(DRAIN_MILLIS);
    private long left;
    private long lastRead = System.nanoTime();

    Drain(long frameBytes) {
      this.left = frameBytes;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (msg instanceof ByteBuf bytes) {
        left -= bytes.readableBytes();
      }
      ReferenceCountUtil.release(msg);
      lastRead = System.nanoTime();
      if (left <= 0) {
        ctx.close();
      }
    }

    void closeWhenDone(Channel ch) {
      long now = System.nanoTime();
      if (now - lastRead >= QUIET_NANOS || now >= deadline) {
        ch.close();
      } else if (ch.isActive()) {
        ch.eventLoop().schedule(() -> closeWhenDone(ch), 50, TimeUnit.MILLISECONDS);
      }
    }
  }

  /** Queues {@code message} and has it written and flushed on the event loop, behind what is already queued. */
  void send(Message message) {
    outbox.add(message);
    flush();
  }

  /**
   * Queues a frame without flushing: the next {@link #flush} writes it together with whatever else is queued, in
   * one event-loop task and one socket write, so a small result's OPENED, BATCH and END reach the client in one
   * packet and wake it once. Whoever queues must flush.
   */
  void sendUnflushed(Message message) {
    outbox.add(message);
  }

  /**
   * Writes everything queued, in order, with one flush. From a stream's thread this is one task for the event loop
   * (Netty would make one per write and one per flush, each a separate socket write once the loop has woken);
   * on the loop itself it writes at once.
   */
  void flush() {
    Channel ch = channel;
    if (ch == null || outbox.isEmpty() || !drainScheduled.compareAndSet(false, true)) {
      return;
    }
    if (ch.eventLoop().inEventLoop()) {
      drainOutbox();
      return;
    }
    try {
      ch.eventLoop().execute(this::drainOutbox);
    } catch (RejectedExecutionException loopGone) {
      drainScheduled.set(false);
      dropOutbox();
    }
  }

  private void drainOutbox() {
    drainScheduled.set(false);
    Channel ch = channel;
    boolean wrote = false;
    for (Message message = outbox.poll(); message != null; message = outbox.poll()) {
      // A closed channel releases what it is given (a BATCH's inline bytes), as writeAndFlush did.
      ch.write(message, ch.voidPromise());
      wrote = true;
    }
    if (wrote) {
      ch.flush();
    }
  }

  /** Frees queued frames that will never be written (the event loop is gone). */
  private void dropOutbox() {
    for (Message message = outbox.poll(); message != null; message = outbox.poll()) {
      ReferenceCountUtil.release(message);
    }
  }

  /** Closes the connection without a word (server shutdown after its streams were told). */
  public void close() {
    Channel ch = channel;
    if (ch != null) {
      ch.close();
    }
  }
}
