package io.thallus.cli.sidebyside;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import io.thallus.spi.BatchContents;
import io.thallus.engine.CancelSignal;
import io.thallus.engine.EngineSession;
import io.thallus.engine.QueryEngine;
import io.thallus.engine.QueryResult;
import io.thallus.engine.QuerySpec;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Serves results that were computed ahead of time and kept in server memory, and passes every other query to the
 * engine it wraps. This is the "transport only" setting of the Thallus paper: with the batches already in memory,
 * a stream measures how fast a transport moves them and nothing else. Each stream gets its own handles on the same
 * buffers (no copy); the prepared batches live until the engine is closed.
 */
public final class PreparedQueryEngine implements QueryEngine {
  private record Key(String sql, int batchRows) {}

  private record Prepared(Schema schema, List<BatchContents> batches) {}

  private final QueryEngine delegate;
  private final BufferAllocator allocator;
  private final Map<Key, Prepared> prepared = new ConcurrentHashMap<>();

  /** {@code allocator} holds the prepared batches; it must outlive this engine. */
  public PreparedQueryEngine(QueryEngine delegate, BufferAllocator allocator) {
    this.delegate = delegate;
    this.allocator = allocator;
  }

  /** Runs {@code sql} to the end now and keeps its batches for every later query with the same text and size. */
  public long prepare(String sql, int batchRows) {
    List<BatchContents> batches = new ArrayList<>();
    long bytes = 0;
    try (QueryResult result = delegate.execute(new QuerySpec(sql, java.util.Optional.empty(), batchRows, Map.of()),
        allocator)) {
      BatchContents batch;
      while ((batch = result.next()) != null) {
        batches.add(batch);
        bytes += batch.bufferBytes();
      }
      Prepared previous = prepared.put(new Key(sql, batchRows), new Prepared(result.schema(), batches));
      if (previous != null) {
        previous.batches().forEach(BatchContents::close);
      }
      return bytes;
    } catch (RuntimeException e) {
      batches.forEach(BatchContents::close);
      throw e;
    }
  }

  /** The prepared batches of a query (for baselines that move the same buffers without Thallus). */
  public List<BatchContents> batches(String sql, int batchRows) {
    Prepared result = prepared.get(new Key(sql, batchRows));
    if (result == null) {
      throw ThallusException.of(StatusCode.NOT_FOUND, "no prepared result for " + sql);
    }
    return result.batches();
  }

  /** Frees a prepared result once no stream needs it (streams still reading it keep their own handles). */
  public void forget(String sql, int batchRows) {
    Prepared result = prepared.remove(new Key(sql, batchRows));
    if (result != null) {
      result.batches().forEach(BatchContents::close);
    }
  }

  @Override
  public QueryResult execute(QuerySpec spec, BufferAllocator streamAllocator) {
    QueryResult ready = preparedResult(spec);
    return ready != null ? ready : delegate.execute(spec, streamAllocator);
  }

  /**
   * Sessions of the engine underneath; a prepared query is served from memory and leaves the session alone, and
   * everything else a session does (ingests, descriptions of statements and names) goes to the engine's session.
   */
  @Override
  public EngineSession openSession() {
    EngineSession session = delegate.openSession();
    return new EngineSession() {
      @Override
      public QueryResult execute(QuerySpec spec, BufferAllocator streamAllocator, CancelSignal cancel) {
        QueryResult ready = preparedResult(spec);
        return ready != null ? ready : session.execute(spec, streamAllocator, cancel);
      }

      @Override
      public long ingest(io.thallus.engine.IngestSpec spec, org.apache.arrow.vector.ipc.ArrowReader batches,
          BufferAllocator allocator, CancelSignal cancel) {
        return session.ingest(spec, batches, allocator, cancel);
      }

      @Override
      public io.thallus.StatementDescription describeStatement(QuerySpec spec, BufferAllocator allocator,
          CancelSignal cancel) {
        return session.describeStatement(spec, allocator, cancel);
      }

      @Override
      public io.thallus.DatasetDescription describe(String name, java.util.Optional<java.nio.file.Path> dataset,
          BufferAllocator allocator, CancelSignal cancel) {
        return session.describe(name, dataset, allocator, cancel);
      }

      @Override
      public void close() {
        session.close();
      }
    };
  }

  /** The prepared batches of {@code spec}'s query as a result, or null when it was not prepared. */
  private QueryResult preparedResult(QuerySpec spec) {
    Prepared result = spec.dataset().isEmpty() ? prepared.get(new Key(spec.sql(), spec.batchRows())) : null;
    if (result == null) {
      return null;
    }
    return new QueryResult() {
      private int next;
      private volatile boolean cancelled;

      @Override
      public Schema schema() {
        return result.schema();
      }

      @Override
      public BatchContents next() {
        if (cancelled) {
          throw ThallusException.of(StatusCode.CANCELLED, "cancelled");
        }
        return next < result.batches().size() ? result.batches().get(next++).retain() : null;
      }

      @Override
      public void cancel() {
        cancelled = true;
      }

      @Override
      public void close() {}
    };
  }

  @Override
  public void close() {
    for (Prepared result : prepared.values()) {
      result.batches().forEach(BatchContents::close);
    }
    prepared.clear();
    delegate.close();
  }
}
