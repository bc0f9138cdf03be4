package io.thallus.cli;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.thallus.server.Admission;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * The server's metrics in Prometheus' text format at {@code /metrics}, and {@code /health} (200 while the server
 * accepts queries, 503 once it is shutting down), served by Netty on one thread of its own: scrapes are rare and
 * cheap, and a slow scraper must not take threads from the server.
 *
 * <p>Every connection is a stranger, held to the native port's stranger rules: it has {@link Settings#deadline} from
 * its accept to send its request and read the answer, and then it is closed whatever it was doing; an answer closes
 * the connection ({@code Connection: close}), so no connection outlives its deadline. At most
 * {@link Settings#maxConnections} are counted as waiting for their requests (from their first byte, or after a second of
 * silence): one more closes the oldest other silent one, else the oldest other one, so neither silent sockets nor
 * half-sent requests keep a health check out; a request that comes whole is answered before any newcomer is counted.
 */
final class MetricsEndpoint implements AutoCloseable {
  /** The longest request line and the most header bytes a request may have; a scrape needs far less. */
  private static final int MAX_LINE_BYTES = 4096;
  private static final int MAX_HEADER_BYTES = 8192;
  /** The most body bytes a request may carry (a scrape carries none). */
  private static final int MAX_BODY_BYTES = 8192;

  /**
   * How long a connection may stay and how many may be open at once.
   *
   * @param deadline from the accept to the answer; then the connection is closed (default 5 s, as the native port's
   *     handshake timeout)
   * @param maxConnections connections waiting for their requests at once; one more closes another (see the class
   *     comment for which) (default 16)
   */
  record Settings(Duration deadline, int maxConnections) {
    static final Settings DEFAULTS = new Settings(Duration.ofSeconds(5), 16);

    Settings {
      if (deadline.isNegative() || deadline.isZero()) {
        throw new IllegalArgumentException("the metrics deadline must be positive, got " + deadline);
      }
      if (maxConnections < 1) {
        throw new IllegalArgumentException("the metrics endpoint needs at least 1 connection, got " + maxConnections);
      }
    }
  }

  private final EventLoopGroup loop;
  private final Channel listener;

  private MetricsEndpoint(EventLoopGroup loop, Channel listener) {
    this.loop = loop;
    this.listener = listener;
  }

  static MetricsEndpoint start(String host, int port, PrometheusMeterRegistry registry, BooleanSupplier accepting,
      Settings settings) {
    EventLoopGroup loop = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("thallus-metrics", true),
        NioIoHandler.newFactory());
    try {
      Strangers strangers = new Strangers(settings);
      Channel listener = new ServerBootstrap().group(loop).channel(NioServerSocketChannel.class)
          .option(ChannelOption.SO_BACKLOG, 64)
          .childHandler(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel connection) {
              connection.pipeline().addLast(strangers.admit(connection),
                  new HttpServerCodec(MAX_LINE_BYTES, MAX_HEADER_BYTES, MAX_BODY_BYTES),
                  new HttpObjectAggregator(MAX_BODY_BYTES), new Answer(registry, accepting, strangers));
            }
          })
          .bind(host, port).syncUninterruptibly().channel();
      return new MetricsEndpoint(loop, listener);
    } catch (RuntimeException e) {
      loop.shutdownGracefully(0, 0, TimeUnit.SECONDS);
      throw e;
    }
  }

  int port() {
    return ((InetSocketAddress) listener.localAddress()).getPort();
  }

  @Override
  public void close() {
    listener.close().syncUninterruptibly();
    loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }

  /**
   * The connections waiting for their requests, held to the same rule as every door's strangers
   * ({@link Admission.Strangers}: past the cap the oldest silent one goes, else the oldest); each also has its
   * deadline. A connection is counted from its first byte, or once it has been silent for a second, until its whole
   * request has come: a request comes in one piece, so a health probe is counted and answered in the same read and no
   * newcomer can push it out, however fast half-sent requests arrive; a burst of just-accepted connections is not
   * counted either, so it cannot make a just-accepted probe the oldest. At most the cap plus the connections accepted
   * in the last second are open.
   */
  private static final class Strangers {
    /** How long a new connection may stay silent before it counts (and, being silent, goes first). */
    private static final long SILENCE_BEFORE_COUNTING_NANOS = TimeUnit.SECONDS.toNanos(1);
    private final Settings settings;
    /** Touched only on the endpoint's one event loop thread (accepts, reads and closes run there). */
    private final Set<Channel> spoken = new HashSet<>();
    private final Set<Channel> counted = new HashSet<>();
    private final Admission.Strangers<Channel> open;

    Strangers(Settings settings) {
      this.settings = settings;
      this.open = new Admission.Strangers<>(settings.maxConnections(), spoken::contains);
    }

    /** The connection's request has come whole: it is answered now, and no newcomer closes it first. */
    void requestComplete(Channel connection) {
      open.leave(connection);
    }

    /** Counts the connection in (once), closing another if there are too many. */
    private void count(Channel connection) {
      if (connection.isActive() && counted.add(connection)) {
        // Out of the count at once, so the next newcomer picks another even before this close completes.
        open.arrive(connection).ifPresent(Channel::close);
      }
    }

    /** Sets a new connection's deadline and returns what counts it in at its first byte or after its silence. */
    ChannelInboundHandlerAdapter admit(Channel connection) {
      var deadline = connection.eventLoop().schedule(() -> connection.close(), settings.deadline().toNanos(),
          TimeUnit.NANOSECONDS);
      var silence = connection.eventLoop().schedule(() -> count(connection), SILENCE_BEFORE_COUNTING_NANOS,
          TimeUnit.NANOSECONDS);
      connection.closeFuture().addListener(closed -> {
        deadline.cancel(false);
        silence.cancel(false);
        open.leave(connection);
        spoken.remove(connection);
        counted.remove(connection);
      });
      return new ChannelInboundHandlerAdapter() {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
          spoken.add(connection);
          count(connection);
          ctx.pipeline().remove(this);
          ctx.fireChannelRead(msg);
        }
      };
    }
  }

  /** Answers one request and closes the connection. */
  private static final class Answer extends SimpleChannelInboundHandler<FullHttpRequest> {
    private final PrometheusMeterRegistry registry;
    private final BooleanSupplier accepting;
    private final Strangers strangers;
    private boolean answered;

    Answer(PrometheusMeterRegistry registry, BooleanSupplier accepting, Strangers strangers) {
      this.registry = registry;
      this.accepting = accepting;
      this.strangers = strangers;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
      if (answered) {
        return;
      }
      answered = true;
      strangers.requestComplete(ctx.channel());
      if (request.decoderResult().isFailure()) {
        answer(ctx, request, HttpResponseStatus.BAD_REQUEST, "bad request\n", "text/plain; charset=utf-8");
        return;
      }
      switch (new QueryStringDecoder(request.uri()).path()) {
        case "/metrics" -> answer(ctx, request, HttpResponseStatus.OK, registry.scrape(),
            "text/plain; version=0.0.4; charset=utf-8");
        case "/health" -> {
          boolean up = accepting.getAsBoolean();
          answer(ctx, request, up ? HttpResponseStatus.OK : HttpResponseStatus.SERVICE_UNAVAILABLE,
              up ? "accepting queries\n" : "shutting down\n", "text/plain; charset=utf-8");
        }
        default -> answer(ctx, request, HttpResponseStatus.NOT_FOUND, "not found: /metrics or /health\n",
            "text/plain; charset=utf-8");
      }
    }

    private static void answer(ChannelHandlerContext ctx, FullHttpRequest request, HttpResponseStatus status,
        String body, String type) {
      byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
      ByteBuf content = HttpMethod.HEAD.equals(request.method()) ? Unpooled.EMPTY_BUFFER
          : Unpooled.wrappedBuffer(bytes);
      FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, content);
      response.headers().set(HttpHeaderNames.CONTENT_TYPE, type)
          .setInt(HttpHeaderNames.CONTENT_LENGTH, bytes.length)
          .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
      ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      // A reset by the peer or a malformed request: the connection is of no further use, and nothing else is hurt.
      ctx.close();
    }
  }
}
