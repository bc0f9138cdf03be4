package io.thallus.engine;

import io.thallus.DatasetDescription;
import java.nio.file.Path;
import java.util.Optional;
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

  /**
   * The query's rows as at most {@code parts} results that together hold every row once, each produced on its own
   * (the server streams them at once, to one client). An engine splits only what it can split exactly: all parts read
   * one snapshot, and a query whose rows have an order (ORDER BY), or that aggregates, joins or limits, stays whole.
   * Answers one result when it does not split; the server then sends the whole answer on the first stream. Errors
   * as {@link #execute}. The default never splits.
   */
  default java.util.List<QueryResult> executeSplit(QuerySpec spec, int parts, BufferAllocator allocator,
      CancelSignal cancel) {
    return java.util.List.of(execute(spec, allocator, cancel));
  }

  /**
   * Writes {@code batches} into the spec's table, all or nothing: in one transaction of its own, or in the session's
   * (with {@link TransactionMode#SESSION}). Pulls batches from {@code batches} until it reports none left; a
   * failure while reading them (the client went, the ingest was cancelled) undoes what was written. Returns the
   * rows written. Errors name the problem: an unknown table in append mode (NOT_FOUND), a table that exists in
   * create mode (ALREADY_EXISTS), a column whose type differs from the table's (INVALID_ARGUMENT, naming both).
   */
  default long ingest(IngestSpec spec, org.apache.arrow.vector.ipc.ArrowReader batches, BufferAllocator allocator,
      CancelSignal cancel) {
    throw io.thallus.ThallusException.of(io.thallus.StatusCode.UNIMPLEMENTED, "this engine does not take ingests");
  }

  /**
   * What the spec's statement is, without running it: its kind, the Arrow type of each placeholder in order (the
   * engine parses them: those inside string literals, quoted names and comments are none), and the schema of its
   * rows. Prepared in this session (its temporary tables, search path and the spec's dataset count); the spec's
   * parameters are not used. Bad SQL is INVALID_ARGUMENT with the engine's message.
   */
  default io.thallus.StatementDescription describeStatement(QuerySpec spec, BufferAllocator allocator,
      CancelSignal cancel) {
    throw io.thallus.ThallusException.of(io.thallus.StatusCode.UNIMPLEMENTED, "this engine does not describe "
        + "statements");
  }

  /**
   * What {@code name} is, as this session's SQL would resolve it (its temporary objects and current schema count),
   * with {@code dataset} bound first as for a query: its kind, the Arrow schema of {@code SELECT *} over it, and its
   * parts ({@link DatasetDescription}). The name is already checked to be a table name as SQL writes it ({@code t},
   * {@code s.t}, {@code c.s.t}); {@code dataset} is already resolved inside the server's data root. The answer
   * lists only what the session's SQL could read itself: the files of the dataset under the data root. Errors:
   * NOT_FOUND naming the name, OUT_OF_RANGE past {@link DatasetDescription#MAX_PARTS} parts or
   * {@link DatasetDescription#MAX_ROW_GROUPS} row groups. {@code allocator} holds the schema's import while it is
   * read; nothing stays allocated after the call.
   */
  default DatasetDescription describe(String name, Optional<Path> dataset, BufferAllocator allocator,
      CancelSignal cancel) {
    throw io.thallus.ThallusException.of(io.thallus.StatusCode.UNIMPLEMENTED, "this engine does not describe names");
  }

  /** Ends the session: an open transaction rolls back, session objects are dropped. Never throws. */
  @Override
  void close();
}
