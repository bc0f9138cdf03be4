package io.thallus.spi;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;

/** The server side of a transport: one per server, creating one session per client connection. */
public interface ServerTransport extends AutoCloseable {
  /**
   * What a transport's server side may use. {@code memoryPerClient} bounds what one client's session may hold
   * for it (shared segments, registered regions, batches kept until released).
   */
  record Context(BufferAllocator allocator, InetSocketAddress controlAddress, Duration ioTimeout,
      long memoryPerClient) {}

  /** Called when a client chose this transport; {@code offer} holds the client's parameters. */
  ServerSession accept(InetSocketAddress client, Map<String, String> offer);

  @Override
  void close();
}
