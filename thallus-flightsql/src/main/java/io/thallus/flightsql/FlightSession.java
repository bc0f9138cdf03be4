package io.thallus.flightsql;

import io.thallus.ThallusClient;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.BufferAllocator;

/**
 * One Flight SQL client's session: a native connection of its own to the Thallus server, so DuckDB keeps its
 * transaction, temporary tables and settings between calls as it does for a JDBC connection.
 */
final class FlightSession implements AutoCloseable {
  private final String id;
  private final BufferAllocator allocator;
  private final ThallusClient client;
  private final AtomicLong lastUsedNanos = new AtomicLong(System.nanoTime());
  /** The results being sent from this session's memory: ended before the memory is closed. */
  private final java.util.Set<ResultSender> results = java.util.concurrent.ConcurrentHashMap.newKeySet();

  /** The IP address of the client that opened it (null when unknown), whose quota it counts against. */
  private final String address;
  /**
   * Whether a call has named it by its id (bearer token or cookie): then its client may come back on another
   * connection. A session never named is reachable only through the connection that opened it.
   */
  private volatile boolean named;

  FlightSession(String id, BufferAllocator allocator, ThallusClient client, String address) {
    this.id = id;
    this.address = address;
    this.allocator = allocator;
    this.client = client;
  }

  String id() {
    return id;
  }

  String address() {
    return address;
  }

  /**
   * What {@code work} answers on the session's native connection, for the gRPC call this thread is answering:
   * {@code work} may wait there for the client's turn, and that wait ends with the call (see {@link NativeWait}).
   */
  <T> T call(java.util.function.Function<ThallusClient, T> work) {
    touch();
    try {
      return NativeWait.run(() -> work.apply(client));
    } finally {
      touch();
    }
  }

  /** Whether its native connection still works (it fails for good once lost: the server closed it, or went away). */
  boolean connected() {
    return client.isConnected();
  }

  BufferAllocator allocator() {
    return allocator;
  }

  void named() {
    named = true;
  }

  boolean isNamed() {
    return named;
  }

  void touch() {
    lastUsedNanos.set(System.nanoTime());
  }

  long idleNanos() {
    return System.nanoTime() - lastUsedNanos.get();
  }

  void sending(ResultSender result) {
    results.add(result);
  }

  void sent(ResultSender result) {
    results.remove(result);
  }

  @Override
  public void close() {
    for (ResultSender result : java.util.List.copyOf(results)) {
      result.close();
    }
    try {
      client.close();
    } finally {
      allocator.close();
    }
  }
}
