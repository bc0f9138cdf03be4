package io.thallus.internal.server;

import io.thallus.Status;
import io.thallus.ThallusException;
import io.thallus.engine.CancelSignal;
import io.thallus.engine.QueryResult;
import io.thallus.engine.QuerySpec;
import io.thallus.spi.BatchContents;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The parallel streams of one split OPEN. The engine splits the query once, at the first step of whichever stream
 * runs first ({@link io.thallus.engine.EngineSession#executeSplit}); each stream then sends its part, and a stream
 * the engine gave no part (it split into fewer, or not at all) sends the schema and ends empty. A cancel or close of
 * one stream stops them all: each is answered on its own id. Every stream counts as one of the client's streams
 * (its limits, credits and memory budget) and runs its steps on the client's lane like any other.
 */
final class SplitStreams {
  private final ServerConnection connection;
  private final QuerySpec spec;
  private final int parts;
  /** Reaches the engine while it splits: any stream's abort fires it. */
  private final CancelSignal cancel = new CancelSignal();
  /** Read without a lock by {@link #abortAll}, which runs on the event loop and must never wait for the split. */
  private final List<ServerStream> streams = new CopyOnWriteArrayList<>();
  /**
   * Held by the one stream that runs the engine's split (which may take as long as a query), and by the others while
   * they wait for it on their engine threads; the bookkeeping below is guarded by {@code this}, held only briefly, so
   * a stream that finishes or is aborted on the event loop never waits for the split.
   */
  private final Object splitting = new Object();
  // Guarded by this.
  private List<QueryResult> results;
  private ThallusException failure;
  /** The schema every part shares (the first part's). */
  private Schema schema;
  private final boolean[] finished;

  SplitStreams(ServerConnection connection, QuerySpec spec, int parts) {
    this.connection = connection;
    this.spec = spec;
    this.parts = parts;
    this.finished = new boolean[parts];
  }

  /** Where stream {@code index} (0 for the first id) takes its result. */
  ServerStream.ResultSource source(int index) {
    return streamCancel -> part(index, streamCancel);
  }

  void add(ServerStream stream) {
    streams.add(stream);
  }

  /** Stops every stream of the split that still runs, each answered with {@code status}. Takes no lock. */
  void abortAll(Status status) {
    for (ServerStream stream : streams) {
      stream.abort(status, true);
    }
  }

  /** Stream {@code index} has finished: a part it never took is closed. */
  void finished(int index) {
    QueryResult untaken = null;
    synchronized (this) {
      finished[index] = true;
      if (results != null && index < results.size()) {
        untaken = results.set(index, null);
      }
    }
    if (untaken != null) {
      untaken.close();
    }
  }

  private QueryResult part(int index, CancelSignal streamCancel) {
    streamCancel.onCancel(cancel::cancel);
    List<QueryResult> orphans = new ArrayList<>();
    try {
      synchronized (splitting) {
        boolean first;
        synchronized (this) {
          first = results == null && failure == null;
        }
        if (first) {
          split(orphans);
        }
      }
      synchronized (this) {
        if (failure != null) {
          throw failure;
        }
        QueryResult mine = index < results.size() ? results.set(index, null) : null;
        return mine != null ? mine : empty(schema);
      }
    } finally {
      orphans.forEach(QueryResult::close);
    }
  }

  /**
   * Runs the engine's split (under {@link #splitting}, not under this); parts of streams that have finished meanwhile
   * go to {@code orphans}.
   */
  private void split(List<QueryResult> orphans) {
    try {
      List<QueryResult> answered = connection.engineSession().executeSplit(spec, parts, connection.allocator(),
          cancel);
      if (answered.isEmpty() || answered.size() > parts) {
        answered.forEach(QueryResult::close);
        throw new IllegalStateException("the engine split the query into " + answered.size() + " parts, asked for "
            + parts);
      }
      List<QueryResult> wired = new ArrayList<>();
      for (QueryResult result : answered) {
        wired.add(endsOnlyWhole(WireAnswers.of(result, connection.allocator())));
      }
      synchronized (this) {
        results = wired;
        schema = wired.get(0).schema();
        for (int i = 0; i < wired.size(); i++) {
          if (finished[i]) {
            orphans.add(wired.set(i, null));
          }
        }
      }
    } catch (ThallusException e) {
      synchronized (this) {
        failure = e;
      }
    } catch (RuntimeException e) {
      synchronized (this) {
        failure = ThallusException.of(io.thallus.StatusCode.INTERNAL, "splitting the query failed: " + e, e);
      }
    }
  }

  /**
   * {@code part} whose end, once any stream of the split has been stopped, is CANCELLED: an engine read that a
   * cancel interrupts may look like the end of its rows, and a part must not end as if whole when it is not.
   */
  private QueryResult endsOnlyWhole(QueryResult part) {
    return new QueryResult() {
      @Override
      public Schema schema() {
        return part.schema();
      }

      @Override
      public BatchContents next() {
        BatchContents batch = part.next();
        if (batch == null && cancel.isCancelled()) {
          throw ThallusException.of(io.thallus.StatusCode.CANCELLED, "another stream of the split query was "
              + "stopped");
        }
        return batch;
      }

      @Override
      public void cancel() {
        part.cancel();
      }

      @Override
      public void close() {
        part.close();
      }
    };
  }

  /** A part with no rows: the schema, then the end. */
  private static QueryResult empty(Schema schema) {
    return new QueryResult() {
      @Override
      public Schema schema() {
        return schema;
      }

      @Override
      public BatchContents next() {
        return null;
      }

      @Override
      public void cancel() {}

      @Override
      public void close() {}
    };
  }
}
