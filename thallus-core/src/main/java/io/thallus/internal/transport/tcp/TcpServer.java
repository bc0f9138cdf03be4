package io.thallus.internal.transport.tcp;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.internal.transport.ReceivePool;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.IngestFetcher;
import io.thallus.spi.Deadline;
import io.thallus.spi.PackedBody;
import io.thallus.spi.PlacedBody;
import io.thallus.spi.ServerSession;
import io.thallus.spi.ServerTransport;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The tcp transport's server side: a listening socket for data connections, and one session per client. A data
 * connection proves which session it belongs to with the random token the session sent in WELCOME; until it has,
 * the {@link DataConnectionAcceptor} holds it, briefly and boundedly.
 */
final class TcpServer implements ServerTransport {
  static final int TOKEN_BYTES = 16;

  private final ServerSocketChannel listener;
  private final DataConnectionAcceptor acceptor;
  private final SecureRandom random = new SecureRandom();
  private final Map<String, Session> waiting;

  private final Context context;

  private TcpServer(Context context, ServerSocketChannel listener, DataConnectionAcceptor acceptor,
      Map<String, Session> waiting) {
    this.context = context;
    this.listener = listener;
    this.acceptor = acceptor;
    this.waiting = waiting;
  }

  static TcpServer start(Context context) {
    ServerSocketChannel listener = null;
    try {
      listener = ServerSocketChannel.open();
      // A backlog as deep as the pending connections kept: a burst of connects waits in the kernel, not refused.
      listener.bind(new InetSocketAddress(context.controlAddress().getAddress(), 0),
          DataConnectionAcceptor.MAX_PENDING);
      listener.configureBlocking(false);
      Map<String, Session> waiting = new ConcurrentHashMap<>();
      DataConnectionAcceptor acceptor = DataConnectionAcceptor.start(listener, context.handshakeTimeout(),
          (channel, token) -> handOver(waiting, channel, token));
      return new TcpServer(context, listener, acceptor, waiting);
    } catch (IOException e) {
      if (listener != null) {
        DataConnectionAcceptor.closeQuietly(listener);
      }
      throw ThallusException.of(StatusCode.UNAVAILABLE, "cannot open the tcp data port: " + e.getMessage(), e);
    }
  }

  /** Gives a data connection whose token has arrived to the session that token belongs to, or closes it. */
  private static void handOver(Map<String, Session> waiting, SocketChannel channel, byte[] token) {
    String key = HexFormat.of().formatHex(token);
    Session session = waiting.remove(key);
    if (session == null) {
      DataConnectionAcceptor.closeQuietly(channel);
      return;
    }
    if (!session.isFromItsClient(channel)) {
      // A token seen on the wire, presented from another host: refused, and the session still waits for its own
      // client. A token is used once: the one connection it is accepted from is final.
      waiting.putIfAbsent(key, session);
      DataConnectionAcceptor.closeQuietly(channel);
      return;
    }
    SocketIo io;
    try {
      channel.socket().setTcpNoDelay(true);
      io = new SocketIo(channel);
    } catch (IOException e) {
      DataConnectionAcceptor.closeQuietly(channel);
      return;
    }
    if (!session.data.complete(io)) {
      // The session closed before its connection came.
      io.close();
    }
  }

  @Override
  public ServerSession accept(InetSocketAddress client, Map<String, String> offer,
      org.apache.arrow.memory.BufferAllocator clientMemory) {
    byte[] bytes = new byte[TOKEN_BYTES];
    random.nextBytes(bytes);
    String token = HexFormat.of().formatHex(bytes);
    Session session = new Session(token, client.getAddress());
    waiting.put(token, session);
    return session;
  }

  @Override
  public void close() {
    acceptor.close();
    DataConnectionAcceptor.closeQuietly(listener);
    waiting.values().forEach(Session::close);
  }

  /** One client's data connection. Bodies are written in the order core announces them. */
  private final class Session implements ServerSession {
    private final String token;
    /** The control connection's peer: the data connection must come from the same address. */
    private final java.net.InetAddress client;
    private final CompletableFuture<SocketIo> data = new CompletableFuture<>();
    private final Object writeLock = new Object();
    private volatile boolean broken;

    Session(String token, java.net.InetAddress client) {
      this.token = token;
      this.client = client;
    }

    boolean isFromItsClient(SocketChannel channel) {
      try {
        return channel.getRemoteAddress() instanceof InetSocketAddress remote && remote.getAddress().equals(client);
      } catch (IOException e) {
        return false;
      }
    }

    @Override
    public Map<String, String> welcomeParameters() {
      return Map.of(TcpTransport.PORT, Integer.toString(listener.socket().getLocalPort()), TcpTransport.TOKEN, token);
    }

    /** The body follows its frame on the data connection, written straight from the batch's buffers. */
    @Override
    public PlacedBody place(PackedBody body, Deadline deadline) {
      SocketIo io = awaitData(deadline);
      if (broken) {
        throw ThallusException.of(StatusCode.UNAVAILABLE, "the client's data connection has failed");
      }
      return StreamedBodies.place(io, writeLock, body, "client", () -> broken = true);
    }

    /**
     * Ingested bodies come on the data connection after their frames: a reader thread of this connection reads
     * each as it comes (ahead of the engine), into buffers within the client's budget; a body over it is read and
     * dropped, failing only its ingest.
     */
    @Override
    public IngestFetcher ingestFetcher(Map<String, String> parameters) {
      SocketIo io = awaitData(Deadline.after(context.handshakeTimeout()));
      ReceivePool pool = new ReceivePool(context.memoryPerClient());
      BodyReader reader = new BodyReader(io, pool, context.ioTimeout(), "thallus-server-tcp-reader", true);
      reader.start();
      return new IngestFetcher() {
        @Override
        public void fetch(BatchHeader header, Fetched done) {
          reader.fetch(header, done);
        }

        @Override
        public boolean clientHoldsBodies() {
          return false;
        }

        @Override
        public void close() {
          reader.close();
          pool.close();
        }
      };
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
}
