package io.thallus.exchange.internal;

import io.thallus.engine.EngineSession;
import io.thallus.engine.QueryEngine;
import io.thallus.engine.QueryResult;
import io.thallus.engine.QuerySpec;
import org.apache.arrow.memory.BufferAllocator;

/**
 * The engine of an exchange endpoint's server: a query is a pull of one partition's map outputs, an ingest is a
 * push into this endpoint's buffers. Each peer's connection is a session with its own push credits.
 */
public final class ExchangeEngine implements QueryEngine {
  private final MapOutputStore outputs;
  private final PushedStore pushed;
  private final long pushBufferBytesPerPeer;
  private final long joinBytes;
  private final Counters counters;

  public ExchangeEngine(MapOutputStore outputs, PushedStore pushed, long pushBufferBytesPerPeer, long joinBytes,
      Counters counters) {
    this.outputs = outputs;
    this.pushed = pushed;
    this.pushBufferBytesPerPeer = pushBufferBytesPerPeer;
    this.joinBytes = joinBytes;
    this.counters = counters;
  }

  @Override
  public QueryResult execute(QuerySpec spec, BufferAllocator allocator) {
    try (EngineSession session = openSession()) {
      return session.execute(spec, allocator, new io.thallus.engine.CancelSignal());
    }
  }

  @Override
  public EngineSession openSession() {
    return new ExchangeSession(outputs, pushed, new PushCredits(pushBufferBytesPerPeer), joinBytes,
        counters);
  }

  @Override
  public void close() {}
}
