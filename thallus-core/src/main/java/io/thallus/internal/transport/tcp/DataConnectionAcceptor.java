package io.thallus.internal.transport.tcp;

import io.thallus.internal.Backoff;
import io.thallus.internal.RateLimitedLog;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.SequencedSet;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Accepts the tcp data port's connections and reads the token each one starts with, all on one thread and one
 * selector, then hands the connection over. Until its token is in, a connection is pending, and anyone who reaches
 * the port can open one. So a pending connection costs its socket and nothing else, lives at most the handshake
 * timeout, and at most {@link #MAX_PENDING} are kept: over that the oldest is closed, so a flood of silent
 * connections cannot crowd out a client whose token follows its connect within milliseconds.
 */
final class DataConnectionAcceptor implements AutoCloseable {
  static final int MAX_PENDING = 128;
  /** Accepts taken in one turn, so that tokens which arrived meanwhile are read before more connections come in. */
  private static final int ACCEPTS_PER_TURN = 32;
  private static final long IDLE_WAKE_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
  private static final Duration FIRST_ACCEPT_PAUSE = Duration.ofMillis(10);
  private static final Duration MAX_ACCEPT_PAUSE = Duration.ofSeconds(1);
  private static final Duration LOG_INTERVAL = Duration.ofSeconds(1);
  private static final Logger LOG = LoggerFactory.getLogger(DataConnectionAcceptor.class);

  /** Takes a connection whose token is in; from then on the channel is the receiver's to close. */
  interface Handoff {
    void identified(SocketChannel channel, byte[] token);
  }

  private static final class Pending {
    final SocketChannel channel;
    final ByteBuffer token = ByteBuffer.allocate(TcpServer.TOKEN_BYTES);
    final long expiresAtNanos;

    Pending(SocketChannel channel, long expiresAtNanos) {
      this.channel = channel;
      this.expiresAtNanos = expiresAtNanos;
    }
  }

  private final ServerSocketChannel listener;
  private final Selector selector;
  private final SelectionKey listenerKey;
  private final long handshakeTimeoutNanos;
  private final Handoff handoff;
  private final Thread thread;
  /** Oldest first; all share one timeout, so the first also expires first. Only the acceptor thread uses it. */
  private final SequencedSet<Pending> pending = new LinkedHashSet<>();
  private final Backoff acceptBackoff = new Backoff(FIRST_ACCEPT_PAUSE, MAX_ACCEPT_PAUSE);
  private final RateLimitedLog log = new RateLimitedLog(LOG, LOG_INTERVAL);
  private boolean acceptPaused;
  private long acceptResumesAtNanos;
  private volatile boolean closed;

  private DataConnectionAcceptor(ServerSocketChannel listener, Selector selector, Duration handshakeTimeout,
      Handoff handoff) throws IOException {
    this.listener = listener;
    this.selector = selector;
    this.listenerKey = listener.register(selector, SelectionKey.OP_ACCEPT);
    this.handshakeTimeoutNanos = handshakeTimeout.toNanos();
    this.handoff = handoff;
    this.thread = Thread.ofPlatform().name("thallus-server-tcp-accept").daemon().unstarted(this::run);
  }

  /** Starts accepting on {@code listener}, which must be bound and non-blocking. */
  static DataConnectionAcceptor start(ServerSocketChannel listener, Duration handshakeTimeout, Handoff handoff)
      throws IOException {
    Selector selector = Selector.open();
    try {
      DataConnectionAcceptor acceptor = new DataConnectionAcceptor(listener, selector, handshakeTimeout, handoff);
      acceptor.thread.start();
      return acceptor;
    } catch (IOException | RuntimeException e) {
      selector.close();
      throw e;
    }
  }

  private void run() {
    try {
      while (!closed && !Thread.currentThread().isInterrupted()) {
        try {
          selector.select(wakeAfterMillis());
          boolean acceptable = false;
          for (SelectionKey key : selector.selectedKeys()) {
            if (key == listenerKey) {
              acceptable = true;
            } else if (key.isValid()) {
              readToken((Pending) key.attachment());
            }
          }
          selector.selectedKeys().clear();
          if (acceptable) {
            acceptSome();
          }
          closeExpired();
          resumeAcceptingWhenDue();
        } catch (IOException | RuntimeException e) {
          if (closed) {
            return;
          }
          log.warn("loop", "tcp data port failed: {}", e.toString());
          sleep(acceptBackoff.failed());
        }
      }
    } finally {
      pending.forEach(p -> closeQuietly(p.channel));
      pending.clear();
    }
  }

  private void acceptSome() {
    for (int i = 0; i < ACCEPTS_PER_TURN; i++) {
      SocketChannel channel;
      try {
        channel = listener.accept();
      } catch (IOException e) {
        pauseAccepting(e);
        return;
      }
      if (channel == null) {
        return;
      }
      acceptBackoff.succeeded();
      admit(channel);
    }
  }

  /**
   * A failed accept (say EMFILE: no descriptor free) leaves the connection queued and the listener ready, so trying
   * again at once would fail again at once, in a loop. Tokens of pending connections are still read meanwhile.
   */
  private void pauseAccepting(IOException e) {
    Duration pause = acceptBackoff.failed();
    listenerKey.interestOps(0);
    acceptPaused = true;
    acceptResumesAtNanos = System.nanoTime() + pause.toNanos();
    log.warn("accept", "tcp data listener failed: {}; accepting again in {} ms", e.toString(), pause.toMillis());
  }

  private void resumeAcceptingWhenDue() {
    if (acceptPaused && System.nanoTime() - acceptResumesAtNanos >= 0) {
      listenerKey.interestOps(SelectionKey.OP_ACCEPT);
      acceptPaused = false;
    }
  }

  private void admit(SocketChannel channel) {
    Pending connection = new Pending(channel, System.nanoTime() + handshakeTimeoutNanos);
    try {
      channel.configureBlocking(false);
      // A client sends its token as soon as it is connected: it is often here already, and then nothing is kept.
      if (readToken(connection)) {
        return;
      }
      if (pending.size() >= MAX_PENDING) {
        drop(pending.getFirst());
      }
      channel.register(selector, SelectionKey.OP_READ, connection);
      pending.add(connection);
    } catch (IOException | RuntimeException e) {
      drop(connection);
    }
  }

  /** Reads what has arrived of the token; true once the connection is settled (handed over, or closed). */
  private boolean readToken(Pending connection) {
    try {
      if (connection.channel.read(connection.token) < 0) {
        drop(connection);
        return true;
      }
    } catch (IOException e) {
      drop(connection);
      return true;
    }
    if (connection.token.hasRemaining()) {
      return false;
    }
    pending.remove(connection);
    SelectionKey key = connection.channel.keyFor(selector);
    if (key != null) {
      key.cancel();
    }
    try {
      handoff.identified(connection.channel, connection.token.array());
    } catch (RuntimeException e) {
      closeQuietly(connection.channel);
      log.warn("handoff", "could not take a tcp data connection: {}", e.toString());
    }
    return true;
  }

  private void closeExpired() {
    long now = System.nanoTime();
    while (!pending.isEmpty() && now - pending.getFirst().expiresAtNanos >= 0) {
      drop(pending.getFirst());
    }
  }

  private void drop(Pending connection) {
    pending.remove(connection);
    closeQuietly(connection.channel);
  }

  /** Until the next pending connection expires or accepting resumes, and at most {@link #IDLE_WAKE_NANOS}. */
  private long wakeAfterMillis() {
    long now = System.nanoTime();
    long wakeNanos = IDLE_WAKE_NANOS;
    if (!pending.isEmpty()) {
      wakeNanos = Math.min(wakeNanos, pending.getFirst().expiresAtNanos - now);
    }
    if (acceptPaused) {
      wakeNanos = Math.min(wakeNanos, acceptResumesAtNanos - now);
    }
    // Rounded up, and never 0, which would mean "no timeout" to select.
    return Math.max(1, (wakeNanos + 999_999) / 1_000_000);
  }

  private static void sleep(Duration pause) {
    try {
      Thread.sleep(pause);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  static void closeQuietly(java.io.Closeable closeable) {
    try {
      closeable.close();
    } catch (IOException ignored) {
      // Closing is all there is left to do with it.
    }
  }

  /** Stops accepting and closes every pending connection; the listener stays open, it is the caller's. */
  @Override
  public void close() {
    closed = true;
    selector.wakeup();
    try {
      thread.join(TimeUnit.SECONDS.toMillis(5));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    closeQuietly(selector);
  }
}
