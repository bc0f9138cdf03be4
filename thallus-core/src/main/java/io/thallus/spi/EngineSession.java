package io.thallus.spi;

import org.apache.arrow.memory.BufferAllocator;

/**
 * One client connection's state in the engine: its transaction, temporary tables, variables and current schema.
 * The server opens a session at a client's first query and closes it when the client goes; closing rolls back a
 * transaction the client left open. The server may call {@link #execute} from several threads at once (one per
 * open stream of the client): a session serializes its work itself.
 */
public interface EngineSession extends AutoCloseable {
  /** As {@link QueryEngine#execute(QuerySpec, BufferAllocator, CancelSignal)}, in this session. */
  QueryResult execute(QuerySpec spec, BufferAllocator allocator, CancelSignal cancel);

  /** Ends the session: an open transaction rolls back, session objects are dropped. Never throws. */
  @Override
  void close();
}
