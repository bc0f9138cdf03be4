package io.thallus.internal.server;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.DecoderException;
import io.thallus.Status;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.internal.protocol.Message;
import io.thallus.internal.protocol.Protocol;
import io.thallus.internal.protocol.QueryParameters;
import io.thallus.spi.ControlWriter;
import io.thallus.spi.QuerySpec;
import io.thallus.spi.ServerSession;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.BufferAllocator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client connection on the server: the HELLO handshake, then OPEN/NEXT/CANCEL/CLOSE for its streams. Runs on
 * the connection's event loop and never blocks it: queries run on stream threads.
 */
public final class ServerConnectionHandler extends SimpleChannelInboundHandler<Message> {
  private static final Logger LOG = LoggerFactory.getLogger(ServerConnectionHandler.class);
  private static final AtomicLong IDS = new AtomicLong();

  private final ServerContext context;
  private final long id = IDS.incrementAndGet();
  private final Map<Integer, ServerStream> streams = new ConcurrentHashMap<>();
  /** Streams the client has closed whose threads are still winding down: they no longer count against its limit. */
  private final java.util.Set<Integer> closing = ConcurrentHashMap.newKeySet();
  private final ControlWriter controlWriter = this::writeBatch;
  private volatile Channel channel;
  private volatile ServerSession session;
  /** Holds what this connection's streams produce; it outlives them while the client still holds batches. */
  private BufferAllocator allocator;
  private boolean inactive;
  private boolean sessionClosed;

  public ServerConnectionHandler(ServerContext context) {
    this.context = context;
  }

  long id() {
    return id;
  }

  ControlWriter controlWriter() {
    return controlWriter;
  }

  BufferAllocator allocator() {
    return allocator;
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    channel = ctx.channel();
    allocator = context.allocator().newChildAllocator("connection-" + id, 0, context.limits().memoryPerClient());
    context.registry().add(this);
    if (context.registry().isShuttingDown()) {
      failConnection(Status.of(StatusCode.UNAVAILABLE, "the server is shutting down"));
    } else if (context.registry().connections().size() > context.limits().maxConnections()) {
      failConnection(Status.of(StatusCode.RESOURCE_EXHAUSTED, "the server has its maximum of "
          + context.limits().maxConnections() + " clients connected; try again later"));
    }
  }

  @Override
  protected void channelRead0(ChannelHandlerContext ctx, Message message) {
    if (message instanceof Message.Hello hello) {
      onHello(hello);
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
      default -> failConnection(Status.of(StatusCode.PROTOCOL_ERROR,
          "a client does not send " + message.type()));
    }
  }

  private void onHello(Message.Hello hello) {
    if (session != null) {
      failConnection(Status.of(StatusCode.PROTOCOL_ERROR, "HELLO sent twice"));
      return;
    }
    if (hello.version() != Protocol.VERSION) {
      failConnection(Status.of(StatusCode.UNIMPLEMENTED, "protocol version " + hello.version()
          + " is not supported; this server speaks version " + Protocol.VERSION));
      return;
    }
    if (!context.authentication().accepts(hello.credentials())) {
      LOG.warn("connection {} from {} failed authentication", id, channel.remoteAddress());
      // Which part was wrong is not said: that would help a guesser.
      failConnection(Status.of(StatusCode.UNAUTHENTICATED,
          "authentication failed: this server needs a valid token, or a user name and password"));
      return;
    }
    InetSocketAddress remote = (InetSocketAddress) channel.remoteAddress();
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
        ServerSession accepted = started.get().server().accept(remote, hello.parameters());
        session = accepted;
        send(new Message.Welcome(Protocol.VERSION, name, accepted.welcomeParameters(), context.serverName()));
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
    try {
      if (streams.containsKey(streamId)) {
        throw ThallusException.of(StatusCode.FAILED_PRECONDITION, "stream id " + streamId + " is in use");
      }
      if (open.batchRows() < 1 || open.batchRows() > context.maxBatchRows()) {
        throw ThallusException.of(StatusCode.INVALID_ARGUMENT,
            "batch rows must be within 1.." + context.maxBatchRows() + ", got " + open.batchRows());
      }
      if (open.credits() < 0) {
        throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "negative credits " + open.credits());
      }
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
          QueryParameters.forEngine(open.parameters()), open.schemaOnly(), open.options());
      ServerStream stream = new ServerStream(this, context, session, streamId, spec, open.credits());
      streams.put(streamId, stream);
      context.registry().add(stream);
      try {
        context.streamThreads().execute(stream);
      } catch (RejectedExecutionException e) {
        streams.remove(streamId);
        context.registry().remove(stream);
        throw ThallusException.of(StatusCode.UNAVAILABLE, "the server is shutting down");
      }
      stream.scheduleTimeout(open.timeoutMillis());
    } catch (ThallusException e) {
      send(new Message.Error(streamId, e.code(), e.status().description()));
    }
  }

  private void onNext(Message.Next next) {
    ServerStream stream = streams.get(next.streamId());
    for (long batchId : next.releases()) {
      session.released(next.streamId(), batchId);
    }
    if (stream != null) {
      stream.grant(next.credits());
    }
    // A NEXT for a stream that has just ended crossed its END on the wire: nothing left to grant.
  }

  private void abortStream(int streamId, Status status, boolean answer) {
    ServerStream stream = streams.get(streamId);
    if (stream != null) {
      stream.abort(status, answer);
    }
  }

  /** Called by a stream's thread when it has finished and released what it held. */
  private void closeStream(int streamId) {
    if (streams.containsKey(streamId)) {
      closing.add(streamId);
    }
    abortStream(streamId, Status.of(StatusCode.CANCELLED, "stream " + streamId + " closed by the client"), false);
  }

  void streamDone(ServerStream stream) {
    streams.remove(stream.id(), stream);
    closing.remove(stream.id());
    context.registry().remove(stream);
    closeSessionIfIdle();
  }

  private void closeSessionIfIdle() {
    boolean last;
    synchronized (this) {
      last = inactive && streams.isEmpty() && !sessionClosed;
      sessionClosed |= last;
    }
    if (!last) {
      return;
    }
    try {
      ServerSession toClose = session;
      if (toClose != null) {
        toClose.close();
      }
    } finally {
      if (allocator != null) {
        try {
          allocator.close();
        } catch (IllegalStateException leak) {
          LOG.error("connection {} leaked memory: {}", id, leak.getMessage());
        }
      }
    }
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    synchronized (this) {
      inactive = true;
    }
    for (ServerStream stream : streams.values()) {
      stream.abort(Status.of(StatusCode.UNAVAILABLE, "the client disconnected"), false);
    }
    context.registry().remove(this);
    closeSessionIfIdle();
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    if (cause instanceof DecoderException) {
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

  void send(Message message) {
    Channel ch = channel;
    if (ch != null) {
      ch.writeAndFlush(message, ch.voidPromise());
    }
  }

  private void writeBatch(io.thallus.spi.BatchHeader header, io.netty.buffer.ByteBuf inline, Runnable onWritten) {
    Channel ch = channel;
    ch.writeAndFlush(new Message.Batch(header, inline)).addListener(f -> onWritten.run());
  }

  /** Closes the connection without a word (server shutdown after its streams were told). */
  public void close() {
    Channel ch = channel;
    if (ch != null) {
      ch.close();
    }
  }
}
