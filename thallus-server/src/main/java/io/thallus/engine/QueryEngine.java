package io.thallus.engine;

import org.apache.arrow.memory.BufferAllocator;

/**
 * Runs SQL for a server and yields Arrow batches. One engine per server, one {@link EngineSession} per client
 * connection, one result per stream.
 */
public interface QueryEngine extends AutoCloseable {
  /**
   * Compiles and starts the query, returning once the schema is known (not once the whole result is). Blocking is
   * fine: the server calls this on the stream's own thread. Failures are {@link io.thallus.ThallusException}s with
   * the engine's own message (bad SQL is INVALID_ARGUMENT).
   */
  QueryResult execute(QuerySpec spec, BufferAllocator allocator);

  /**
   * As {@link #execute(QuerySpec, BufferAllocator)}, stopping early when {@code cancel} fires: an engine that can
   * interrupt a running query registers how with {@link CancelSignal#onCancel}.
   */
  default QueryResult execute(QuerySpec spec, BufferAllocator allocator, CancelSignal cancel) {
    return execute(spec, allocator);
  }

  /**
   * The threads the engine runs one query on, counting the thread that calls it (DuckDB's {@code threads} setting),
   * if the engine says; empty otherwise. The server's {@link io.thallus.server.Overlap#auto()} policy leaves a core
   * to the engine's own workers only when it has some (more than one thread).
   */
  default java.util.OptionalInt queryThreads() {
    return java.util.OptionalInt.empty();
  }

  /**
   * A session for one client connection. An engine without session state answers with a session that runs every
   * query on its own, as {@link #execute(QuerySpec, BufferAllocator, CancelSignal)} does.
   */
  default EngineSession openSession() {
    return new EngineSession() {
      @Override
      public QueryResult execute(QuerySpec spec, BufferAllocator allocator, CancelSignal cancel) {
        return QueryEngine.this.execute(spec, allocator, cancel);
      }

      @Override
      public void close() {}
    };
  }

  @Override
  void close();
}
