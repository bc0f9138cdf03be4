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
  private final java.util.concurrent.atomic.AtomicInteger preparedCount = new java.util.concurrent.atomic.AtomicInteger();
  private final java.util.concurrent.atomic.AtomicInteger pendingCount = new java.util.concurrent.atomic.AtomicInteger();

  /** The IP address of the client that opened it (null when unknown), whose quota it counts against. */
  private final String address;

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

  ThallusClient client() {
    touch();
    return client;
  }

  BufferAllocator allocator() {
    return allocator;
  }

  java.util.concurrent.atomic.AtomicInteger preparedCount() {
    return preparedCount;
  }

  java.util.concurrent.atomic.AtomicInteger pendingCount() {
    return pendingCount;
  }

  void touch() {
    lastUsedNanos.set(System.nanoTime());
  }

  long idleNanos() {
    return System.nanoTime() - lastUsedNanos.get();
  }

  @Override
  public void close() {
    try {
      client.close();
    } finally {
      allocator.close();
    }
  }
}
