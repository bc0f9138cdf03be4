package io.thallus.internal.client;

import io.netty.bootstrap.Bootstrap;
import io.netty.handler.ssl.SslHandler;
import io.thallus.Tls;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.DecoderException;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.thallus.Location;
import io.thallus.BatchCompression;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.internal.Transports;
import io.thallus.internal.batch.BatchReceiver;
import io.thallus.internal.batch.BatchSender;
import io.thallus.spi.IngestPlacer;
import io.thallus.internal.protocol.FrameDecoder;
import io.thallus.internal.protocol.Message;
import io.thallus.internal.protocol.MessageCodec;
import io.thallus.internal.protocol.Protocol;
import io.thallus.spi.ClientOffer;
import io.thallus.spi.ClientSession;
import io.thallus.spi.Deadline;
import io.thallus.spi.Transport;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * One client's control connection: handshake, stream bookkeeping, and routing of what the server sends. Batches
 * reach their stream through the chosen transport's {@link ClientSession}.
 */
public final class ClientConnection implements AutoCloseable {
  /** The settings the connection needs, taken from the public client options. */
  public record Settings(String clientName, Duration connectTimeout, Duration timeout, int maxFrameBytes,
      long receivePoolBytes, Map<String, String> credentials, Tls tls, BatchCompression resultCompression) {}

  private final BufferAllocator allocator;
  private final Settings settings;
  private final EventLoopGroup loop;
  private final Map<Integer, StreamState> streams = new ConcurrentHashMap<>();
  private final Map<Integer, IngestState> ingests = new ConcurrentHashMap<>();
  private final PendingAnswers answers = new PendingAnswers();
  /** Sends ingested batches: made at the first ingest, with the transport's placer for the write direction. */
  private BatchSender ingestSender;
  private boolean serializes;
  private final AtomicInteger nextStreamId = new AtomicInteger(1);
  private final CompletableFuture<Message.Welcome> welcome = new CompletableFuture<>();
  private volatile ClientSession session;
  /** Receives the batches of this connection's streams; made with the session. */
  private volatile BatchReceiver inbox;
  /** The batches the consumers released and the server has not been told of yet. */
  private final ReleasedBatches released = new ReleasedBatches();
  private volatile ThallusException broken;
  private String transport;
  private Channel channel;
  /** The server's limits from WELCOME, checked before a request is sent (none before the handshake). */
  private volatile ServerLimits limits = ServerLimits.NONE;
  /** The event loop while it hands out one socket read's frames; their consumers are woken after it (see below). */
  private volatile Thread delivering;
  /** Streams to wake once the current read has been handed out. Touched only by the event loop. */
  private final Set<StreamState> toWake = new LinkedHashSet<>();

  private ClientConnection(BufferAllocator allocator, Settings settings) {
    this.allocator = allocator;
    this.settings = settings;
    this.loop = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("thallus-client-io", true),
        NioIoHandler.newFactory());
  }

  /**
   * Connects, offers the transports {@code location} allows, and finishes the handshake. When the location lets the
   * client choose and the chosen transport cannot start on this side (say cross-memory reads are not permitted), it
   * connects again without that transport.
   */
  public static ClientConnection connect(BufferAllocator allocator, Location location, Settings settings) {
    Set<String> unusable = new HashSet<>();
    while (true) {
      ClientConnection connection = new ClientConnection(allocator, settings);
      try {
        connection.open(location, unusable);
        return connection;
      } catch (TransportUnusable e) {
        connection.close();
        unusable.add(e.transport);
      } catch (RuntimeException e) {
        connection.close();
        throw e;
      }
    }
  }

  /** The chosen transport's client side failed to start: the caller may try the others. */
  private static final class TransportUnusable extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final String transport;

    TransportUnusable(String transport, ThallusException cause) {
      super(cause.getMessage(), cause, false, false);
      this.transport = transport;
    }
  }

  private void open(Location location, Set<String> unusable) {
    Deadline deadline = Deadline.after(settings.connectTimeout());
    List<Transport> candidates = location.transport()
        .map(name -> List.of(Transports.byName(name)))
        .orElseGet(() -> Transports.available().stream()
            .filter(t -> !unusable.contains(t.name()) && t.isAvailableFor(location.host())).toList());
    if (candidates.isEmpty()) {
      throw ThallusException.of(StatusCode.UNIMPLEMENTED, "no transport can reach " + location.host());
    }
    Bootstrap bootstrap = new Bootstrap()
        .group(loop)
        .channel(NioSocketChannel.class)
        .option(ChannelOption.TCP_NODELAY, true)
        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, deadline.remainingMillis()))
        .handler(new ChannelInitializer<Channel>() {
          @Override
          protected void initChannel(Channel ch) {
            FrameDecoder frames = new FrameDecoder(settings.maxFrameBytes());
            // Large ipc frames: collect the socket reads without copying them into one buffer.
            frames.setCumulator(ByteToMessageDecoder.COMPOSITE_CUMULATOR);
            if (settings.tls() != null) {
              // The host and port let the engine check the certificate names the host we dialled.
              SslHandler tls = settings.tls().context().newHandler(ch.alloc(), location.host(), location.port());
              ch.pipeline().addLast("tls", tls);
            }
            ch.pipeline()
                .addLast("frames", frames)
                .addLast("decoder", new MessageCodec.Decoder())
                .addLast("encoder", MessageCodec.Encoder.INSTANCE)
                .addLast("connection", new Handler());
          }
        });
    ChannelFuture connected = bootstrap.connect(location.host(), location.port());
    if (!connected.awaitUninterruptibly(deadline.remainingMillis())) {
      connected.cancel(false);
      throw deadline.expired("a connection to " + location);
    }
    if (!connected.isSuccess()) {
      Throwable cause = connected.cause();
      throw ThallusException.of(StatusCode.UNAVAILABLE, "cannot connect to " + location + ": "
          + (cause == null ? "cancelled" : cause.getMessage()), cause);
    }
    channel = connected.channel();
    Map<String, ClientOffer> offers = new LinkedHashMap<>();
    try {
      Map<String, String> parameters = new HashMap<>();
      for (Transport candidate : candidates) {
        ClientOffer offer = candidate.offer(new ClientOffer.Context(allocator, location.host(), location.port(),
            settings.timeout(), settings.receivePoolBytes(), ByteBufAllocator.DEFAULT));
        offers.put(candidate.name(), offer);
        parameters.putAll(offer.parameters());
      }
      if (settings.resultCompression() != BatchCompression.NONE) {
        parameters.put(Protocol.CLIENT_RESULT_COMPRESSION, settings.resultCompression().name());
      }
      channel.writeAndFlush(new Message.Hello(Protocol.VERSION, settings.clientName(),
          new ArrayList<>(offers.keySet()), parameters, settings.credentials()));
      Message.Welcome welcomed = awaitWelcome(deadline, location);
      ClientOffer chosen = offers.remove(welcomed.transport());
      if (chosen == null) {
        throw ThallusException.of(StatusCode.PROTOCOL_ERROR,
            "the server chose transport " + welcomed.transport() + ", which this client did not offer");
      }
      transport = welcomed.transport();
      limits = ServerLimits.of(welcomed);
      try {
        session = chosen.accept(welcomed.parameters());
        serializes = candidates.stream().filter(t -> t.name().equals(welcomed.transport()))
            .anyMatch(Transport::serializesBatches);
        inbox = new BatchReceiver(BatchReceiver.Fetchers.of(session, session.serverHoldsBodies()), serializes,
            // What a client holds of received batches is bounded by its receive pool: so is one batch decompressed.
            allocator, () -> "the client's memory for received batches", settings::receivePoolBytes,
            new StreamResults(streams, released, this::flushReleases, this::failAndClose));
      } catch (ThallusException e) {
        chosen.close();
        if (location.transport().isEmpty() && e.code() == StatusCode.UNAVAILABLE && candidates.size() > 1) {
          throw new TransportUnusable(transport, e);
        }
        throw e;
      }
    } finally {
      offers.values().forEach(ClientOffer::close);
    }
  }

  private Message.Welcome awaitWelcome(Deadline deadline, Location location) {
    try {
      return welcome.get(deadline.remainingMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      throw deadline.expired("the handshake with " + location);
    } catch (ExecutionException e) {
      throw e.getCause() instanceof ThallusException t ? t
          : ThallusException.of(StatusCode.UNAVAILABLE, "handshake failed: " + e.getCause(), e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw ThallusException.of(StatusCode.CANCELLED, "interrupted during the handshake");
    }
  }

  public String transport() {
    return transport;
  }

  /** Sends OPEN ({@code request} with its stream id replaced by the next free one); the returned state yields OPENED (or the error), then the batches. */
  public StreamState open(Message.Open request) {
    return openParts(request).get(0);
  }

  /**
   * Sends OPEN as {@link #open} does, for {@code request.parts()} parallel streams of one result: they take that many
   * consecutive stream ids, the OPEN naming the first. The states, in id order, each yield its OPENED (or the error),
   * then its batches.
   */
  public java.util.List<StreamState> openParts(Message.Open request) {
    ThallusException failure = broken;
    if (failure != null) {
      throw failure;
    }
    limits.check(request);
    int parts = request.parts();
    int first = nextStreamId.getAndAdd(parts);
    java.util.List<StreamState> states = new java.util.ArrayList<>();
    for (int i = 0; i < parts; i++) {
      StreamState state = new StreamState(this, first + i, settings.timeout(), request.credits());
      streams.put(first + i, state);
      states.add(state);
    }
    failIfBrokenMeanwhile(states);
    send(new Message.Open(first, request.sql(), request.dataset(), request.batchRows(), request.credits(),
        request.timeoutMillis(), request.flags(), request.parameters(), request.options(), request.parameterRows(),
        parts));
    return states;
  }

  /**
   * Fails {@code states} if the connection broke after openParts checked it but before they were registered:
   * failAll sets {@code broken} before it fails the registered streams, so a stream registered too late for it sees
   * {@code broken} here instead, and its reader gets the error at once rather than at its timeout.
   */
  private void failIfBrokenMeanwhile(java.util.List<StreamState> states) {
    ThallusException failure = broken;
    if (failure != null) {
      for (StreamState state : states) {
        state.onFailure(failure);
      }
      throw failure;
    }
  }

  /** Sends DESCRIBE under the next free stream id and waits (within the client's timeout) for its answer. */
  public io.thallus.DatasetDescription describe(String name, String dataset) {
    int streamId = nextStreamId.getAndIncrement();
    return answers.ask(streamId, new Message.Describe(streamId, name, dataset), Message.Described.class,
        "describing " + name, this::sendUnlessBroken, settings.timeout()).description();
  }

  /** Sends LIST_SHARDS under the next free stream id and waits (within the client's timeout) for its answer. */
  public List<String> shardedDatasets() {
    int streamId = nextStreamId.getAndIncrement();
    return answers.ask(streamId, new Message.ListShards(streamId), Message.Shards.class,
        "listing sharded datasets", this::sendUnlessBroken, settings.timeout()).names();
  }

  private void sendUnlessBroken(Message message) {
    ThallusException failure = broken;
    if (failure != null) {
      throw failure;
    }
    send(message);
  }

  /**
   * Sends INGEST ({@code request} with its stream id replaced by the next free one, and the write direction's
   * parameters added to its options); the returned state sends the batches.
   */
  public IngestState openIngest(Message.Ingest request) {
    ThallusException failure = broken;
    if (failure != null) {
      throw failure;
    }
    // The schema travels in the INGEST frame: a very wide one (100,000 columns) can be over the server's limit.
    limits.checkFrameLength(request, "the ingest request (its schema of " + request.schema().length + " bytes)");
    BatchSender sender = ingestSender();
    int id = nextStreamId.getAndIncrement();
    IngestState state = new IngestState(this, id, settings.timeout());
    ingests.put(id, state);
    ThallusException brokenMeanwhile = broken;
    if (brokenMeanwhile != null) {
      // As for streams (failIfBrokenMeanwhile): the connection broke between the check above and the registration.
      state.onFailure(brokenMeanwhile);
      throw brokenMeanwhile;
    }
    Map<String, String> options = new HashMap<>(request.options());
    IngestPlacer placer = sender.placesBodies() ? session.ingestPlacer() : null;
    if (placer != null) {
      options.putAll(placer.parameters());
    }
    send(new Message.Ingest(id, request.table(), request.mode(), request.credits(), request.timeoutMillis(),
        request.schema(), request.flags(), request.insertStatement(), options));
    return state;
  }

  /** The connection's sender of ingested batches, made once. */
  synchronized BatchSender ingestSender() {
    if (ingestSender == null) {
      IngestPlacer placer = serializes ? null : session.ingestPlacer();
      ingestSender = new BatchSender(placer, null, serializes,
          (header, inline) -> {
            Channel ch = channel;
            if (ch != null && ch.isActive()) {
              ch.writeAndFlush(new Message.Batch(header, inline), ch.voidPromise());
            } else {
              inline.release();
              throw ThallusException.of(StatusCode.UNAVAILABLE, "the connection to the server was lost");
            }
          },
          allocator, settings.timeout(), settings.receivePoolBytes(),
          () -> "the client's memory for batches being sent", BatchCompression.NONE);
    }
    return ingestSender;
  }

  void forget(IngestState state) {
    ingests.remove(state.id(), state);
  }

  /** Whether the connection failed or was closed: every call on it fails from then on. */
  public boolean isBroken() {
    return broken != null;
  }

  /** The largest frame the server takes (0 before the handshake, or from a server that does not say). */
  public int serverMaxFrameBytes() {
    return limits.maxFrameBytes();
  }

  /**
   * Gives the stream {@code credits} back with the releases recorded so far; sends nothing when there is neither (a
   * consumer that waits for its next batch calls this with what it owes, which may be nothing).
   */
  void grant(int streamId, int credits) {
    long[] releases = released.take(streamId);
    if (streams.containsKey(streamId) && (credits > 0 || releases.length > 0)) {
      send(new Message.Next(streamId, credits, releases));
    } else if (releases.length > 0) {
      send(new Message.Next(streamId, 0, releases));
    }
  }

  void send(Message message) {
    Channel ch = channel;
    if (ch != null && ch.isActive()) {
      ch.writeAndFlush(message, ch.voidPromise());
    }
  }

  /**
   * Whether {@code state}'s consumer will be woken after the read being handed out on this thread (the event loop);
   * false on any other thread, which wakes it itself.
   */
  boolean wakeAfterRead(StreamState state) {
    if (Thread.currentThread() != delivering) {
      return false;
    }
    toWake.add(state);
    return true;
  }

  /** The read has been handed out: wake each consumer it gave something to, once. */
  private void wakeDeferred() {
    delivering = null;
    if (toWake.isEmpty()) {
      return;
    }
    for (StreamState state : toWake) {
      state.wakeNow();
    }
    toWake.clear();
  }

  void forget(StreamState state) {
    if (streams.remove(state.id(), state)) {
      BatchReceiver current = inbox;
      if (current != null) {
        current.forget(state.id());
      }
      flushReleases(state.id());
    }
  }

  /** Sends a stream's waiting releases now, for a stream that will grant no more credits. */
  private void flushReleases(int streamId) {
    if (!streams.containsKey(streamId)) {
      long[] releases = released.take(streamId);
      if (releases.length > 0) {
        send(new Message.Next(streamId, 0, releases));
      }
    }
  }

  /** The connection cannot go on: every stream and ingest fails with {@code error}, and the channel closes. */
  private void failAndClose(ThallusException error) {
    failAll(error);
    Channel ch = channel;
    if (ch != null) {
      ch.close();
    }
  }

  private void failAll(ThallusException error) {
    if (broken == null) {
      broken = error;
    }
    welcome.completeExceptionally(error);
    answers.failAll(error);
    for (StreamState state : List.copyOf(streams.values())) {
      state.onFailure(error);
    }
    for (IngestState state : List.copyOf(ingests.values())) {
      state.onFailure(error);
    }
  }

  @Override
  public void close() {
    failAll(ThallusException.of(StatusCode.CANCELLED, "the client was closed"));
    Channel ch = channel;
    if (ch != null) {
      ch.close().awaitUninterruptibly(settings.timeout().toMillis());
    }
    loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(settings.timeout().toMillis());
    BatchSender sending;
    synchronized (this) {
      sending = ingestSender;
    }
    if (sending != null) {
      sending.close();
    }
    ClientSession current = session;
    if (current != null) {
      current.close();
    }
    BatchReceiver arrived = inbox;
    if (arrived != null) {
      arrived.close();
    }
  }

  private final class Handler extends SimpleChannelInboundHandler<Message> {
    @Override
    protected void channelRead0(ChannelHandlerContext ctx, Message message) {
      delivering = Thread.currentThread();
      switch (message) {
        case Message.Welcome w -> {
          if (w.version() != Protocol.VERSION) {
            failAndClose(ctx, ThallusException.of(StatusCode.UNIMPLEMENTED,
                "the server speaks protocol version " + w.version() + ", this client " + Protocol.VERSION));
          } else {
            welcome.complete(w);
          }
        }
        case Message.Opened o -> {
          StreamState state = streams.get(o.streamId());
          if (state != null) {
            Schema schema = Schema.deserializeMessage(ByteBuffer.wrap(o.schema()));
            // The stream's batches are checked against it before anyone reads them (inbox: made before WELCOME ends).
            inbox.expect(o.streamId(), schema);
            state.onOpened(schema);
          }
        }
        case Message.Batch b -> {
          BatchReceiver current = inbox;
          if (current == null) {
            failAndClose(ctx, ThallusException.of(StatusCode.PROTOCOL_ERROR, "BATCH before the handshake ended"));
          } else {
            current.onBatch(b.header(), b.inline());
          }
        }
        case Message.Next n -> {
          IngestState ingest = ingests.get(n.streamId());
          BatchSender sending;
          synchronized (ClientConnection.this) {
            sending = ingestSender;
          }
          if (sending != null) {
            for (long batchId : n.releases()) {
              sending.released(n.streamId(), batchId);
            }
          }
          if (ingest != null && n.credits() > 0) {
            ingest.onCredits(n.credits());
          }
        }
        case Message.Described d -> answers.onAnswer(d.streamId(), d);
        case Message.Shards s -> answers.onAnswer(s.streamId(), s);
        case Message.Error e when answers.isWaiting(e.streamId()) -> answers.onError(e);
        case Message.End e when ingests.get(e.streamId()) instanceof IngestState ingest -> ingest.onEnd(
            new IngestState.End(e.rows(), e.batches(), e.bytes(), e.serverNanos()));
        case Message.Error e when ingests.get(e.streamId()) instanceof IngestState ingest -> ingest.onFailure(
            ThallusException.of(e.code(), e.message()));
        case Message.End e -> afterBatches(e.streamId(), () -> {
          StreamState state = streams.get(e.streamId());
          if (state != null) {
            state.onEnd(new StreamState.End(e.rows(), e.batches(), e.bytes(), e.serverNanos(), e.serverCpuNanos()));
          }
        });
        case Message.Error e -> {
          ThallusException error = ThallusException.of(e.code(), e.message());
          if (e.streamId() == 0) {
            failAndClose(ctx, error);
          } else {
            afterBatches(e.streamId(), () -> {
              StreamState state = streams.get(e.streamId());
              if (state != null) {
                state.onFailure(error);
              }
            });
          }
        }
        default -> failAndClose(ctx, ThallusException.of(StatusCode.PROTOCOL_ERROR,
            "a server does not send " + message.type()));
      }
    }

    /** Runs a stream's END or error only after the batches the server sent before it. */
    private void afterBatches(int streamId, Runnable action) {
      BatchReceiver current = inbox;
      if (current == null) {
        action.run();
      } else {
        current.afterBatches(streamId, action);
      }
    }

    private void failAndClose(ChannelHandlerContext ctx, ThallusException error) {
      failAll(error);
      ctx.close();
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
      wakeDeferred();
      ctx.fireChannelReadComplete();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      wakeDeferred();
      failAll(ThallusException.of(StatusCode.UNAVAILABLE, "the connection to the server was lost"));
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      wakeDeferred();
      Throwable root = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
      if (root instanceof javax.net.ssl.SSLException) {
        failAndClose(ctx, ThallusException.of(StatusCode.UNAVAILABLE,
            "TLS with the server failed: " + root.getMessage(), root));
      } else if (cause instanceof DecoderException) {
        failAndClose(ctx, ThallusException.of(StatusCode.PROTOCOL_ERROR,
            "malformed frame from the server: " + cause.getMessage(), cause));
      } else {
        failAndClose(ctx, ThallusException.of(StatusCode.UNAVAILABLE,
            "the connection to the server failed: " + cause.getMessage(), cause));
      }
    }
  }
}
