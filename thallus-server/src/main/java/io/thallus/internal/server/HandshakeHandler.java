package io.thallus.internal.server;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.util.concurrent.ScheduledFuture;
import io.thallus.BatchCompression;
import io.thallus.Status;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.internal.RateLimitedLog;
import io.thallus.internal.batch.BatchSender;
import io.thallus.internal.protocol.FrameDecoder;
import io.thallus.internal.protocol.Message;
import io.thallus.internal.protocol.Protocol;
import io.thallus.spi.ServerSession;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.BufferAllocator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A new connection, until its HELLO is answered: it counts as pending (not as a client), may send only a small frame,
 * and has {@code handshakeTimeout} to send a HELLO that authenticates it and names a transport this server can start.
 * Then it sends WELCOME and puts a {@link ServerConnectionHandler} in its own place in the pipeline, handing it the
 * connection's {@link ServerConnection}; anything else first is answered with an ERROR that closes the connection.
 */
public final class HandshakeHandler extends SimpleChannelInboundHandler<Message> {
  private static final Logger LOG = LoggerFactory.getLogger(HandshakeHandler.class);
  private static final AtomicLong IDS = new AtomicLong();
  private static final RateLimitedLog FAILED_LOGINS = new RateLimitedLog(LOG, Duration.ofSeconds(1));

  private final ServerContext context;
  private final StreamRegistry registry;
  private final long id = IDS.incrementAndGet();
  private Channel channel;
  private ScheduledFuture<?> handshakeTimer;
  /** Made once the credential is known, inside its budget; this handler's to close until it is handed on. */
  private BufferAllocator allocator;
  private String budgetCredential;
  private boolean handedOn;
  /** A first message has been answered (WELCOME hands on; anything else closes the connection). */
  private boolean answered;

  public HandshakeHandler(ServerContext context, StreamRegistry registry) {
    this.context = context;
    this.registry = registry;
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    channel = ctx.channel();
    registry.addPending(channel).ifPresent(oldest -> ConnectionFailures.fail(oldest,
        Status.of(StatusCode.RESOURCE_EXHAUSTED, "too many connections are waiting to authenticate (the most is "
            + context.limits().admission().maxStrangers() + ", maxStrangers); this one waited longest")));
    if (registry.isShuttingDown()) {
      ConnectionFailures.fail(channel, Status.of(StatusCode.UNAVAILABLE, "the server is shutting down"));
      return;
    }
    long timeoutMillis = context.limits().admission().handshakeTimeout().toMillis();
    handshakeTimer = ctx.executor().schedule(() -> ConnectionFailures.fail(channel, Status.of(
        StatusCode.DEADLINE_EXCEEDED, "no valid HELLO within " + timeoutMillis + " ms of connecting")),
        timeoutMillis, TimeUnit.MILLISECONDS);
    ctx.fireChannelActive();
  }

  @Override
  protected void channelRead0(ChannelHandlerContext ctx, Message message) {
    if (answered) {
      // The first HELLO was refused and the connection is closing: what came after it (in the same read) is dropped,
      // so a second HELLO cannot take the connection's place and memory twice.
      return;
    }
    answered = true;
    if (message instanceof Message.Hello hello) {
      onHello(ctx, hello);
    } else {
      ConnectionFailures.fail(channel, Status.of(StatusCode.FAILED_PRECONDITION,
          "expected HELLO first, got " + message.type()));
    }
  }

  private void onHello(ChannelHandlerContext ctx, Message.Hello hello) {
    if (hello.version() != Protocol.VERSION) {
      ConnectionFailures.fail(channel, Status.of(StatusCode.UNIMPLEMENTED, "protocol version " + hello.version()
          + " is not supported; this server speaks version " + Protocol.VERSION));
      return;
    }
    Optional<String> credential = context.authentication().credential(hello.credentials());
    if (credential.isEmpty()) {
      // Rate-limited: a guesser (or a Flight session trying a Basic password as the token) can fail thousands a second.
      FAILED_LOGINS.warn("authentication", "connection {} from {} failed authentication", id, channel.remoteAddress());
      // Which part was wrong is not said: that would help a guesser.
      ConnectionFailures.fail(channel, Status.of(StatusCode.UNAUTHENTICATED,
          "authentication failed: this server needs a valid token, or a user name and password"));
      return;
    }
    BatchCompression resultCompression;
    try {
      String asked = hello.parameters().get(Protocol.CLIENT_RESULT_COMPRESSION);
      resultCompression = asked == null ? BatchCompression.NONE : BatchCompression.valueOf(asked);
    } catch (IllegalArgumentException e) {
      ConnectionFailures.fail(channel, Status.of(StatusCode.INVALID_ARGUMENT, Protocol.CLIENT_RESULT_COMPRESSION
          + " names no compression this server knows (NONE, LZ4_FRAME, ZSTD)"));
      return;
    }
    InetSocketAddress remote = (InetSocketAddress) channel.remoteAddress();
    // Without authentication every client is "anyone": only its address tells clients apart.
    StreamRegistry.Promotion promotion = registry.promote(channel, context.limits().maxConnections(),
        context.authentication().isRequired() ? credential.get() : null, remote.getAddress().getHostAddress());
    if (promotion.refusal().isPresent()) {
      ConnectionFailures.fail(channel, Status.of(StatusCode.RESOURCE_EXHAUSTED, promotion.refusal().get()));
      return;
    }
    // The connection's steps run through its credential's lane, shared with that credential's other connections.
    EngineLane lane = new EngineLane(promotion.lane(), context.limits().engineThreadsPerConnection());
    // Its memory lies inside its credential's budget, shared the same way; made only now, once the credential is known.
    budgetCredential = context.authentication().isRequired() ? credential.get() : null;
    allocator = context.budgets().take(budgetCredential).newChildAllocator(ServerConnection.ALLOCATOR_PREFIX + id,
        0, context.limits().memoryPerClient());
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
        // What the session holds for its client counts in the connection's own budget, inside its credential's.
        ServerSession accepted = started.get().server().accept(remote, hello.parameters(), allocator);
        welcome(ctx, started.get(), accepted, lane, resultCompression);
        return;
      } catch (ThallusException e) {
        unavailable.add(name + " (" + e.status().description() + ")");
      }
    }
    List<String> serverHas = context.transports().stream().map(t -> t.transport().name()).toList();
    ConnectionFailures.fail(channel, Status.of(StatusCode.UNIMPLEMENTED, "no transport in common: the client offers "
        + hello.transports() + ", this server has " + serverHas
        + (unavailable.isEmpty() ? "" : "; could not start " + unavailable)));
  }

  /** Answers WELCOME on {@code started}'s transport and hands the connection on. */
  private void welcome(ChannelHandlerContext ctx, ServerContext.Started started, ServerSession accepted,
      EngineLane lane, BatchCompression resultCompression) {
    boolean serializes = started.transport().serializesBatches();
    Outbox outbox = new Outbox(channel);
    BatchSender sender = new BatchSender(accepted, accepted, serializes, outbox.frames(), allocator,
        context.ioTimeout(), context.limits().memoryPerClient(), () -> context.budgets().budgetName(allocator),
        resultCompression);
    ServerConnection connection = new ServerConnection(id, context, started.transport().name(), serializes,
        allocator, budgetCredential, accepted, sender, outbox, lane);
    handshakeTimer.cancel(false);
    // Authenticated: from now on the client may send frames as large as the server allows.
    if (ctx.pipeline().get("frames") instanceof FrameDecoder frames) {
      frames.setMaxFrameLength(context.limits().maxFrameBytes());
    }
    Map<String, String> parameters = new HashMap<>(accepted.welcomeParameters());
    parameters.put(Protocol.SERVER_MAX_FRAME_BYTES, Integer.toString(context.limits().maxFrameBytes()));
    parameters.put(Protocol.SERVER_MAX_SQL_BYTES, Integer.toString(context.limits().maxSqlBytes()));
    parameters.put(Protocol.SERVER_MAX_CREDITS, Integer.toString(context.limits().maxCreditsPerStream()));
    handedOn = true;
    // The frames after HELLO, even those of this same read, go to the connection's handler.
    ctx.pipeline().replace(this, "connection", new ServerConnectionHandler(connection, registry));
    outbox.send(new Message.Welcome(Protocol.VERSION, started.transport().name(), parameters,
        context.serverName()));
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    if (handshakeTimer != null) {
      handshakeTimer.cancel(false);
    }
    registry.remove(ctx.channel());
    if (allocator != null && !handedOn) {
      ServerConnection.closeMemory(allocator, budgetCredential, id, context);
    }
    ctx.fireChannelInactive();
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    ConnectionFailures.caught(ctx, cause, id);
  }
}
