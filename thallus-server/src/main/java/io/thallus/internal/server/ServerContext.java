package io.thallus.internal.server;

import io.thallus.server.Authentication;
import io.thallus.engine.QueryEngine;
import io.thallus.spi.ServerTransport;
import io.thallus.spi.Transport;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import org.apache.arrow.memory.BufferAllocator;

/**
 * What every connection of one server shares (its registry of live streams and connections aside: that is the
 * handlers' to keep, so that what a stream reaches never leads back to the streams).
 */
public record ServerContext(
    String serverName,
    BufferAllocator allocator,
    QueryEngine engine,
    Optional<DataRoot> dataRoot,
    List<Started> transports,
    ExecutorService engineThreads,
    ScheduledExecutorService timers,
    Duration ioTimeout,
    Duration idleTimeout,
    int maxBatchRows,
    CredentialBudgets budgets,
    Authentication authentication,
    Limits limits,
    boolean tls,
    ServerMetrics metrics,
    ProducerPool producers,
    ServerShards shards) {

  /** A context with no sharded datasets declared. */
  public ServerContext(String serverName, BufferAllocator allocator, QueryEngine engine, Optional<DataRoot> dataRoot,
      List<Started> transports, ExecutorService engineThreads, ScheduledExecutorService timers, Duration ioTimeout,
      Duration idleTimeout, int maxBatchRows, CredentialBudgets budgets, Authentication authentication, Limits limits,
      boolean tls, ServerMetrics metrics, ProducerPool producers) {
    this(serverName, allocator, engine, dataRoot, transports, engineThreads, timers, ioTimeout, idleTimeout,
        maxBatchRows, budgets, authentication, limits, tls, metrics, producers, ServerShards.NONE);
  }

  /**
   * What one server lets its clients use, and what a stranger can make it hold before authenticating.
   *
   * @param maxConnections authenticated clients connected at once
   * @param admission the deadline and cap for connections that have not finished HELLO, and the quotas per
   *     credential and per address
   * @param helloFrameBytes the largest frame read before authentication (HELLO is small)
   * @param maxFrameBytes the largest frame read from an authenticated client
   * @param connectionIdleTimeout how long an authenticated connection with no open stream may stay silent
   * @param maxStreams streams open on the whole server (each holds an engine result)
   * @param maxStreamsPerConnection streams one client may have open
   * @param maxCreditsPerStream batches one stream may be granted ahead of what it has sent
   * @param maxCreditsPerConnection the same, summed over one client's streams
   * @param engineThreadsPerConnection engine threads one client's streams may occupy at once
   * @param maxSqlBytes the longest SQL text, in UTF-8 bytes
   * @param memoryPerClient each connection's Arrow memory (its child allocator: batches, inline bodies and ipc
   *     frames until written) and what a transport holds for it
   */
  public record Limits(int maxConnections, io.thallus.server.Admission admission, int helloFrameBytes,
      int maxFrameBytes, Duration connectionIdleTimeout, int maxStreams, int maxStreamsPerConnection,
      int maxCreditsPerStream, int maxCreditsPerConnection, int engineThreadsPerConnection, int maxSqlBytes,
      long memoryPerClient) {}

  /** A transport with its started server side. */
  public record Started(Transport transport, ServerTransport server) {}

  public Optional<Started> transport(String name) {
    return transports.stream().filter(t -> t.transport().name().equals(name)).findFirst();
  }
}
