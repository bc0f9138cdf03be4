package io.thallus.flightsql;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFactory;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http2.Http2ConnectionHandler;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2Exception;
import io.netty.handler.codec.http2.Http2Stream;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.ScheduledFuture;
import io.thallus.server.Admission;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Flight SQL port's stranger rules, the native port's: every TCP connection gRPC accepts is watched from its
 * first moment, below TLS and HTTP/2, until one of its calls authenticates (the authenticator says so through
 * {@link #authenticated}). One that does not within the admission's {@code handshakeTimeout} is closed, and past
 * {@code maxStrangers} waiting the oldest silent one is closed first, so silent sockets, a TLS handshake never
 * finished and an HTTP/2 connection that sends no call with valid credentials all go. Connections from one address
 * count against {@code maxConnectionsPerAddress}, authenticated or not.
 *
 * <p>gRPC offers no hook per accepted connection, so the watcher goes in where Netty makes the connection: a server
 * channel whose accepted children carry it at the head of their pipelines before gRPC adds its own handlers. The
 * event loops that go with that channel type are this class's, closed with it. A connection is un-counted when its
 * socket closes, by whatever path: a child whose registration fails (its event loop shut down, say) is closed
 * without ever becoming active, and the notice of its close could not run on that loop.
 */
final class FlightAdmission implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(FlightAdmission.class);

  /**
   * How often, and how far apart, a connection is looked at for a refused call's stream: gRPC writes the refusal's
   * status through its write queue on the connection's event loop, so the stream is answered a moment after the
   * refusal; two seconds at most.
   */
  private static final int RESET_TRIES = 20;
  private static final long RESET_INTERVAL_MILLIS = 100;

  private final Admission policy;
  private final Admission.Strangers<Watcher> strangers;
  private final Admission.Quota<String> perAddress;
  /** Each connection's watcher, by its remote address as gRPC reports it to calls. */
  private final Map<String, Watcher> byRemote = new ConcurrentHashMap<>();
  private final EventLoopGroup boss = new MultiThreadIoEventLoopGroup(1,
      new DefaultThreadFactory("thallus-flightsql-accept", true), NioIoHandler.newFactory());
  private final EventLoopGroup workers = new MultiThreadIoEventLoopGroup(0,
      new DefaultThreadFactory("thallus-flightsql-io", true), NioIoHandler.newFactory());

  FlightAdmission(Admission policy) {
    this.policy = policy;
    this.strangers = new Admission.Strangers<>(policy.maxStrangers(), Watcher::hasSpoken);
    this.perAddress = new Admission.Quota<>(policy.maxConnectionsPerAddress());
  }

  /** Sets up gRPC's Netty server to accept through this watcher. */
  void configure(io.grpc.netty.NettyServerBuilder netty) {
    ChannelFactory<ServerChannel> channels = WatchingServerChannel::new;
    netty.channelFactory(channels).bossEventLoopGroup(boss).workerEventLoopGroup(workers);
  }

  /** A call on the connection at {@code remote} has authenticated: that connection is no stranger any more. */
  void authenticated(String remote) {
    Watcher watcher = remote == null ? null : byRemote.get(remote);
    if (watcher != null) {
      watcher.admitted();
    }
  }

  /**
   * The server refused a message on the connection at {@code remote} and answered its call while the client may still
   * be sending the rest (InboundMessageLimits): the HTTP/2 streams the server has finished answering there are reset
   * (NO_ERROR, as RFC 9113 8.1 lets a server do after a complete response), so the client stops sending, its call
   * ends on both sides and the connection can go idle.
   */
  void resetAnsweredRequests(String remote) {
    Watcher watcher = remote == null ? null : byRemote.get(remote);
    if (watcher != null) {
      watcher.resetAnsweredStreams(RESET_TRIES);
    }
  }

  /** Connections waiting to authenticate now. */
  int strangerCount() {
    return strangers.count();
  }

  @Override
  public void close() {
    boss.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    workers.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
  }

  /**
   * NIO's server channel, with a watcher first in every accepted connection's pipeline. Connections are counted
   * here, on the one accepting thread, so the oldest stranger is the one accepted first (connections become active
   * on several event loops, in no set order).
   */
  private final class WatchingServerChannel extends NioServerSocketChannel {
    @Override
    protected int doReadMessages(List<Object> accepted) throws Exception {
      java.nio.channels.SocketChannel socket = javaChannel().accept();
      if (socket == null) {
        return 0;
      }
      Channel child = admit(this, socket);
      if (child != null) {
        accepted.add(child);
      }
      return 1;
    }
  }

  /**
   * A connection just accepted, as a channel carrying its watcher; null (and the socket closed) when its address has
   * no room left.
   */
  Channel admit(Channel parent, java.nio.channels.SocketChannel socket) {
    Watcher watcher = new Watcher();
    WatchedChannel child;
    try {
      child = new WatchedChannel(parent, socket, watcher);
    } catch (RuntimeException e) {
      closeQuietly(socket);
      throw e;
    }
    if (!watcher.arrive(child)) {
      child.unsafe().closeForcibly();
      return null;
    }
    return child;
  }

  private static void closeQuietly(java.nio.channels.SocketChannel socket) {
    try {
      socket.close();
    } catch (IOException e) {
      LOG.debug("closing a refused Flight SQL connection: {}", e.toString());
    }
  }

  /** Connections from {@code address} counted now (for tests). */
  int connectionsFrom(String address) {
    return perAddress.held(address);
  }

  /** An accepted connection that un-counts itself as its socket closes, on any path (a failed registration too). */
  private static final class WatchedChannel extends io.netty.channel.socket.nio.NioSocketChannel {
    private final Watcher watcher;

    WatchedChannel(Channel parent, java.nio.channels.SocketChannel socket, Watcher watcher) {
      super(parent, socket);
      this.watcher = watcher;
    }

    @Override
    protected void doClose() throws Exception {
      try {
        super.doClose();
      } finally {
        watcher.leave();
      }
    }
  }

  /** One accepted connection: a stranger until a call on it authenticates. */
  private final class Watcher extends ChannelInboundHandlerAdapter {
    private final long arrivedNanos = System.nanoTime();
    private volatile Channel channel;
    private volatile boolean spoken;
    /** Let go before its event loop had it: closed as soon as it does. */
    private volatile boolean evicted;
    private volatile String remote;
    /** The address counted against its quota; null once given back. Guarded by this. */
    private String address;
    private volatile ScheduledFuture<?> deadline;

    boolean hasSpoken() {
      return spoken;
    }

    /** Counts a connection just accepted; false when its address has no room left (then it is not counted). */
    boolean arrive(Channel child) {
      InetSocketAddress peer = (InetSocketAddress) child.remoteAddress();
      String ip = peer.getAddress().getHostAddress();
      if (!perAddress.tryTake(ip)) {
        LOG.debug("closing a Flight SQL connection from {}: {} connections from there already "
            + "(maxConnectionsPerAddress)", ip, perAddress.held(ip));
        return false;
      }
      channel = child;
      synchronized (this) {
        address = ip;
      }
      remote = peer.toString();
      byRemote.put(remote, this);
      child.pipeline().addFirst("thallus-admission", this);
      strangers.arrive(this).ifPresent(Watcher::evict);
      return true;
    }

    private void evict() {
      evicted = true;
      if (channel.isRegistered()) {
        channel.close();
      }
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
      if (evicted) {
        ctx.close();
        return;
      }
      long millis = policy.handshakeTimeout().toMillis();
      long left = Math.max(0, millis - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - arrivedNanos));
      deadline = ctx.executor().schedule(() -> {
        if (strangers.leave(this)) {
          LOG.debug("closing a Flight SQL connection from {}: no authenticated call within {} ms", remote, millis);
          ctx.close();
        }
      }, left, TimeUnit.MILLISECONDS);
      ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      spoken = true;
      ctx.fireChannelRead(msg);
    }

    void admitted() {
      strangers.leave(this);
    }

    /**
     * Resets, on the connection's event loop, every stream the server has answered and closed from its side while
     * the client has not finished sending (half closed, local); tries again {@code triesLeft} times until there is
     * one, as the refusal's status may not be written yet.
     */
    void resetAnsweredStreams(int triesLeft) {
      Channel connection = channel;
      if (connection == null || !connection.isActive() || triesLeft <= 0) {
        return;
      }
      connection.eventLoop().schedule(() -> {
        Http2ConnectionHandler http2 = connection.pipeline().get(Http2ConnectionHandler.class);
        ChannelHandlerContext context = connection.pipeline().context(Http2ConnectionHandler.class);
        if (http2 == null || context == null) {
          return;
        }
        List<Http2Stream> answered = new java.util.ArrayList<>();
        try {
          http2.connection().forEachActiveStream(stream -> {
            if (stream.state() == Http2Stream.State.HALF_CLOSED_LOCAL) {
              answered.add(stream);
            }
            return true;
          });
        } catch (Http2Exception cannotHappen) {
          // Only the visitor could throw, and this one does not.
          throw new IllegalStateException(cannotHappen);
        }
        if (answered.isEmpty()) {
          resetAnsweredStreams(triesLeft - 1);
          return;
        }
        for (Http2Stream stream : answered) {
          LOG.debug("resetting stream {} from {}: answered while its request was still being sent", stream.id(),
              remote);
          http2.resetStream(context, stream.id(), Http2Error.NO_ERROR.code(), context.newPromise());
        }
        context.flush();
      }, RESET_INTERVAL_MILLIS, TimeUnit.MILLISECONDS);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      leave();
      ctx.fireChannelInactive();
    }

    /** The connection is gone: it is no stranger and no connection of its address any more. Idempotent. */
    void leave() {
      strangers.leave(this);
      ScheduledFuture<?> timer = deadline;
      if (timer != null) {
        timer.cancel(false);
      }
      String counted;
      synchronized (this) {
        counted = address;
        address = null;
      }
      if (counted != null) {
        byRemote.remove(remote, this);
        perAddress.giveBack(counted);
      }
    }
  }
}
