package io.thallus.spi;

import io.netty.buffer.ByteBufAllocator;
import java.time.Duration;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;

/** What a client proposes for one connection, before it knows which transport the server will choose. */
public interface ClientOffer extends AutoCloseable {
  /** What a transport's client side may use. */
  record Context(BufferAllocator allocator, String host, int port, Duration ioTimeout, long receivePoolBytes,
      ByteBufAllocator byteBufs) {}

  /** Parameters for HELLO, each key prefixed with the transport's name and a dot. */
  Map<String, String> parameters();

  /** The server chose this transport: finish connecting with its WELCOME parameters. */
  ClientSession accept(Map<String, String> welcome);

  /** The server chose another transport, or the connection failed before a session began. */
  @Override
  void close();

  /** An offer that holds nothing until accepted: fixed HELLO parameters, and a session made from WELCOME's. */
  static ClientOffer of(Map<String, String> parameters,
      java.util.function.Function<Map<String, String>, ClientSession> accept) {
    Map<String, String> fixed = Map.copyOf(parameters);
    return new ClientOffer() {
      @Override
      public Map<String, String> parameters() {
        return fixed;
      }

      @Override
      public ClientSession accept(Map<String, String> welcome) {
        return accept.apply(welcome);
      }

      @Override
      public void close() {}
    };
  }
}
