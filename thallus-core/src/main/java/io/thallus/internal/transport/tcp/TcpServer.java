package io.thallus.internal.transport.tcp;

import io.netty.buffer.Unpooled;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.spi.BatchContents;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.BatchLayouts;
import io.thallus.spi.ControlWriter;
import io.thallus.spi.Deadline;
import io.thallus.spi.ServerSession;
import io.thallus.spi.ServerTransport;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.arrow.memory.ArrowBuf;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The tcp transport's server side: a listening socket for data connections, and one session per client. A data
 * connection proves which session it belongs to with the random token the session sent in WELCOME.
 */
final class TcpServer implements ServerTransport {
  private static final Logger LOG = LoggerFactory.getLogger(TcpServer.class);
  static final int TOKEN_BYTES = 16;
  private static final ByteBuffer ZEROS = ByteBuffer.allocateDirect(BatchLayouts.ALIGNMENT);

  private final Context context;
  private final ServerSocketChannel listener;
  private final Selector selector;
  private final Thread acceptor;
  private final SecureRandom random = new SecureRandom();
  private final Map<String, Session> waiting = new ConcurrentHashMap<>();
  private volatile boolean closed;

  private TcpServer(Context context, ServerSocketChannel listener, Selector selector) {
    this.context = context;
    this.listener = listener;
    this.selector = selector;
    this.acceptor = Thread.ofPlatform().name("thallus-server-tcp-accept").daemon().unstarted(this::acceptLoop);
  }

  static TcpServer start(Context context) {
    try {
      ServerSocketChannel listener = ServerSocketChannel.open();
      listener.bind(new InetSocketAddress(context.controlAddress().getAddress(), 0));
      listener.configureBlocking(false);
      Selector selector = Selector.open();
      listener.register(selector, SelectionKey.OP_ACCEPT);
      TcpServer server = new TcpServer(context, listener, selector);
      server.acceptor.start();
      return server;
    } catch (IOException e) {
      throw ThallusException.of(StatusCode.UNAVAILABLE, "cannot open the tcp data port: " + e.getMessage(), e);
    }
  }

  private void acceptLoop() {
    while (!closed) {
      try {
        selector.select(500);
        selector.selectedKeys().clear();
        SocketChannel accepted;
        while ((accepted = listener.accept()) != null) {
          SocketChannel channel = accepted;
          Thread.ofVirtual().name("thallus-server-tcp-handshake").start(() -> identify(channel));
        }
      } catch (IOException | RuntimeException e) {
        if (!closed) {
          LOG.warn("tcp data listener failed: {}", e.toString());
        }
      }
    }
  }

  /** Reads the token a new data connection starts with and hands the connection to its session. */
  private void identify(SocketChannel channel) {
    SocketIo io = null;
    try {
      channel.socket().setTcpNoDelay(true);
      io = new SocketIo(channel);
      ByteBuffer token = ByteBuffer.allocate(TOKEN_BYTES);
      io.readFully(token, Deadline.after(context.ioTimeout()), "a data connection's token");
      Session session = waiting.remove(HexFormat.of().formatHex(token.array()));
      if (session == null) {
        io.close();
        return;
      }
      session.data.complete(io);
    } catch (IOException | RuntimeException e) {
      if (io != null) {
        io.close();
      } else {
        closeQuietly(channel);
      }
    }
  }

  @Override
  public ServerSession accept(InetSocketAddress client, Map<String, String> offer) {
    byte[] bytes = new byte[TOKEN_BYTES];
    random.nextBytes(bytes);
    String token = HexFormat.of().formatHex(bytes);
    Session session = new Session(token);
    waiting.put(token, session);
    return session;
  }

  @Override
  public void close() {
    closed = true;
    selector.wakeup();
    try {
      acceptor.join(TimeUnit.SECONDS.toMillis(5));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try {
      selector.close();
    } catch (IOException ignored) {
      // Shutting down.
    }
    closeQuietly(listener);
    waiting.values().forEach(Session::close);
  }

  private static void closeQuietly(java.io.Closeable closeable) {
    try {
      closeable.close();
    } catch (IOException ignored) {
      // Shutting down or already broken.
    }
  }

  /** One client's data connection. Bodies are written in the order their BATCH messages are queued. */
  private final class Session implements ServerSession {
    private final String token;
    private final CompletableFuture<SocketIo> data = new CompletableFuture<>();
    private final Object writeLock = new Object();
    private volatile boolean broken;

    Session(String token) {
      this.token = token;
    }

    @Override
    public Map<String, String> welcomeParameters() {
      return Map.of(TcpTransport.PORT, Integer.toString(listener.socket().getLocalPort()), TcpTransport.TOKEN, token);
    }

    @Override
    public void send(int streamId, long batchId, BatchContents contents, ControlWriter control, Deadline deadline) {
      try (contents) {
        BatchLayouts.PackedBody body = BatchLayouts.pack(contents, 0);
        BatchHeader header = new BatchHeader(streamId, batchId, body.parts());
        if (body.length() <= BatchLayouts.INLINE_MAX) {
          control.writeBatch(header,
              BatchLayouts.copyInline(body, control.allocateInline((int) body.length())), () -> {});
          return;
        }
        SocketIo io = awaitData(deadline);
        ByteBuffer[] gather = gatherList(body);
        synchronized (writeLock) {
          if (broken) {
            throw ThallusException.of(StatusCode.UNAVAILABLE, "the client's data connection has failed");
          }
          control.writeBatch(header, Unpooled.EMPTY_BUFFER, () -> {});
          try {
            io.writeFully(gather, deadline, "the client to read batch " + batchId + " of stream " + streamId);
          } catch (IOException | RuntimeException e) {
            // A body cut short leaves the data connection out of step with the control one: nothing can follow.
            broken = true;
            io.close();
            throw e instanceof ThallusException t ? t : ThallusException.of(StatusCode.UNAVAILABLE,
                "writing batch " + batchId + " to the client failed: " + e.getMessage(), e);
          }
        }
      }
    }

    private SocketIo awaitData(Deadline deadline) {
      try {
        return data.get(deadline.remainingMillis(), TimeUnit.MILLISECONDS);
      } catch (TimeoutException e) {
        throw deadline.expired("the client's tcp data connection");
      } catch (ExecutionException e) {
        throw ThallusException.of(StatusCode.UNAVAILABLE, "no tcp data connection: " + e.getCause(), e.getCause());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw ThallusException.of(StatusCode.CANCELLED, "interrupted waiting for the tcp data connection");
      }
    }

    @Override
    public void close() {
      waiting.remove(token, this);
      if (!data.complete(null)) {
        SocketIo io = data.getNow(null);
        if (io != null) {
          synchronized (writeLock) {
            io.close();
          }
        }
      }
    }
  }

  /** The body's buffers for one gathering write, with the alignment padding between them. */
  static ByteBuffer[] gatherList(BatchLayouts.PackedBody body) {
    List<ByteBuffer> list = new ArrayList<>(body.buffers().size() * 2);
    for (int i = 0; i < body.buffers().size(); i++) {
      ArrowBuf buffer = body.buffers().get(i);
      long length = buffer.readableBytes();
      if (length > 0) {
        list.add(buffer.nioBuffer(0, Math.toIntExact(length)));
      }
      long end = body.offsets().get(i) + length;
      long next = i + 1 < body.buffers().size() ? body.offsets().get(i + 1) : body.length();
      if (next > end) {
        list.add(ZEROS.slice(0, (int) (next - end)));
      }
    }
    return list.toArray(ByteBuffer[]::new);
  }

}
