package io.thallus.spi;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;

/** The server side of a transport: one per server, creating one session per client connection. */
public interface ServerTransport extends AutoCloseable {
  /**
   * What a transport's server side may use. {@code allocator} is the server's Arrow budget, for what the transport
   * holds for no client in particular; what a session holds for its client comes from the allocator
   * {@link #accept} gets. {@code memoryPerClient} bounds what one client's session may hold
   * for it (shared segments, registered regions, batches kept until released). {@code handshakeTimeout} bounds how
   * long the transport waits for a client's part of its own handshake, such as a tcp data connection's token: far
   * shorter than {@code ioTimeout}, since whatever is held meanwhile is held for someone not yet known.
   */
  record Context(BufferAllocator allocator, InetSocketAddress controlAddress, Duration ioTimeout,
      long memoryPerClient, Duration handshakeTimeout) {
    public static final Duration DEFAULT_HANDSHAKE_TIMEOUT = Duration.ofSeconds(5);

    public Context {
      if (handshakeTimeout.isNegative() || handshakeTimeout.isZero()) {
        throw new IllegalArgumentException("handshake timeout must be positive: " + handshakeTimeout);
      }
    }

    /** With the {@linkplain #DEFAULT_HANDSHAKE_TIMEOUT default handshake timeout}. */
    public Context(BufferAllocator allocator, InetSocketAddress controlAddress, Duration ioTimeout,
        long memoryPerClient) {
      this(allocator, controlAddress, ioTimeout, memoryPerClient, DEFAULT_HANDSHAKE_TIMEOUT);
    }
  }

  /**
   * Called when a client chose this transport; {@code offer} holds the client's parameters. {@code clientMemory} is
   * the connection's own budget, inside its credential's: whatever the session allocates or accounts for its client
   * (shared segments, exposed regions, received bodies) counts there, so that one credential's connections cannot
   * take more of the server's memory than its share. It closes after the session.
   */
  ServerSession accept(InetSocketAddress client, Map<String, String> offer, BufferAllocator clientMemory);

  @Override
  void close();
}
