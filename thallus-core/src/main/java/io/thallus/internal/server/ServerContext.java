package io.thallus.internal.server;

import io.thallus.Authentication;
import io.thallus.spi.QueryEngine;
import io.thallus.spi.ServerTransport;
import io.thallus.spi.Transport;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import org.apache.arrow.memory.BufferAllocator;

/** What every connection of one server shares. */
public record ServerContext(
    String serverName,
    BufferAllocator allocator,
    QueryEngine engine,
    Optional<DataRoot> dataRoot,
    List<Started> transports,
    ExecutorService streamThreads,
    ScheduledExecutorService timers,
    Duration ioTimeout,
    Duration idleTimeout,
    int maxBatchRows,
    StreamRegistry registry,
    Authentication authentication,
    Limits limits,
    boolean tls) {

  /**
   * What one server lets its clients use. {@code memoryPerClient} bounds each connection's Arrow memory (its child
   * allocator) as well as what a transport holds for it.
   */
  public record Limits(int maxConnections, int maxStreamsPerConnection, int maxSqlBytes, long memoryPerClient) {}

  /** A transport with its started server side. */
  public record Started(Transport transport, ServerTransport server) {}

  public Optional<Started> transport(String name) {
    return transports.stream().filter(t -> t.transport().name().equals(name)).findFirst();
  }
}
