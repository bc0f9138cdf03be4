package io.thallus.duckdb;

import io.thallus.DatasetDescription;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.engine.CancelSignal;
import io.thallus.engine.EngineSession;
import io.thallus.engine.IngestSpec;
import io.thallus.engine.QueryResult;
import io.thallus.engine.QuerySpec;
import io.thallus.engine.TransactionMode;
import io.thallus.engine.UpdateCounts;
import io.thallus.StatementDescription;
import io.thallus.StatementKind;
import java.nio.file.Path;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.duckdb.DuckDBConnection;
import org.duckdb.DuckDBResultSet;

/**
 * One client's session: one DuckDB connection, so its transaction, temporary tables, prepared statements, variables
 * and {@code USE} last from statement to statement.
 *
 * <p>DuckDB runs one statement at a time on a connection and refuses a new one while a streaming result is still
 * open on it. A client may still keep several results open (nested JDBC result sets, many streams of one client):
 * <ul>
 *   <li>As long as a session has run only queries (statements DuckDB's planner says return rows: see
 *       DuckDBStatements), it has no state of its own: a query that finds the session's connection busy runs beside
 *       it, on a DuckDB connection of its own (prepared there first: a statement that turns out not to be a query
 *       runs on the session's connection instead), and streams as a client with many streams expects.
 *   <li>Once it has run anything else (a write, DDL, SET, BEGIN, manual-commit mode), its statements may depend on
 *       its state, so all of them run on its connection: the session's lock lets one DuckDB call run at a time, and
 *       a statement that finds another result still streaming first reads that result's remaining batches into
 *       memory (under the client's memory budget), where its stream goes on reading them. Every result stays valid
 *       and in order; only the earlier one stops streaming from DuckDB.
 * </ul>
 */
public final class DuckDBSession implements EngineSession {
  /** How many prepared statements a session keeps. */
  private static final int PREPARED_KEPT = 32;
  /** The start of the session's name for the batches of an ingest while DuckDB reads them. */
  private static final String INGEST_VIEW = "thallus_ingest_";
  private static final java.util.concurrent.atomic.AtomicLong INGESTS = new java.util.concurrent.atomic.AtomicLong();
  /** How often a statement that waits for the session looks whether it was cancelled. */
  private static final long LOCK_POLL_MILLIS = 50;

  private final DuckDBEngine engine;
  private final DuckDBConnection connection;
  /** One DuckDB call at a time on the connection. */
  private final ReentrantLock lock = new ReentrantLock();
  /** Guards {@link #calling} and the connection's closing against an interrupt meant for another call. */
  private final Object interruptGuard = new Object();

  /** The result that reads from the connection now, if any. Written under lock. */
  private volatile DuckDBResult streaming;
  // Guarded by lock.
  /** Prepared statements kept for their next run, least recently used first. */
  private final LinkedHashMap<String, PreparedStatement> preparedStatements = new LinkedHashMap<>(16, 0.75f, true);
  private Optional<Path> boundDataset = Optional.empty();
  private final NamedDatasetViews namedViews = new NamedDatasetViews();
  /** Databases this session's ATTACH statements attached. */
  private final SessionAttachments attachments;
  // Guarded by interruptGuard.
  private Object calling;
  /**
   * The session has run a statement other than a query (it may have state of its own: a transaction, temp objects,
   * variables, USE): from then on every statement runs on the session's connection.
   */
  private boolean pinned;
  private boolean closed;

  DuckDBSession(DuckDBEngine engine, DuckDBConnection connection) {
    this.engine = engine;
    this.connection = connection;
    this.attachments = new SessionAttachments(connection);
  }

  @Override
  public QueryResult execute(QuerySpec spec, BufferAllocator allocator, CancelSignal cancel) {
    return engine.writes().counting(() -> executeCounted(spec, allocator, cancel));
  }

  /** Splits (SplitScan) only without state of its own, which connections of their own would not see. */
  @Override
  public java.util.List<QueryResult> executeSplit(QuerySpec spec, int parts, BufferAllocator allocator,
      CancelSignal cancel) {
    boolean stateless;
    synchronized (interruptGuard) {
      stateless = !pinned && !closed;
    }
    Optional<java.util.List<QueryResult>> split = Optional.empty();
    if (stateless) {
      split = new SplitScan(engine, cancel).run(spec, parts, allocator);
    }
    return split.orElseGet(() -> java.util.List.of(execute(spec, allocator, cancel)));
  }

  private QueryResult executeCounted(QuerySpec spec, BufferAllocator allocator, CancelSignal cancel) {
    boolean onCursor;
    synchronized (interruptGuard) {
      onCursor = !pinned && (streaming != null || lock.isLocked()) && !spec.hasParameterRows()
          && !spec.inSessionTransaction();
    }
    if (onCursor) {
      // Nothing of the session is in use: a query runs beside the session's, on a DuckDB connection of its own.
      QueryResult beside = engine.executeIfQuery(spec, allocator, cancel);
      if (beside != null) {
        return beside;
      }
    }
    return executeHere(spec, allocator, cancel, false);
  }

  /**
   * The statement's kind, placeholder types and result schema, prepared on the session's connection (its temporary
   * tables and search path count) and never run (see DuckDBStatements). A session without state of its own whose
   * connection is busy describes it beside, as it would run a query, so a result streaming now goes on streaming.
   */
  @Override
  public StatementDescription describeStatement(QuerySpec spec, BufferAllocator allocator, CancelSignal cancel) {
    boolean beside;
    synchronized (interruptGuard) {
      beside = !pinned && (streaming != null || lock.isLocked());
    }
    if (beside) {
      try (DuckDBSession alone = engine.openSession()) {
        return alone.describeStatement(spec, allocator, cancel);
      }
    }
    acquire(cancel::isCancelled);
    try {
      readyFor(spec);
      return DuckDBStatements.describe(connection, spec.sql(), allocator, DuckDBNatives.inTransaction(connection));
    } catch (SQLException e) {
      throw DuckDBErrors.failure(e, spec, cancel, engine);
    } finally {
      lock.unlock();
    }
  }

  /** Describes {@code name} on the session's connection (its temporary objects count), the dataset bound first. */
  @Override
  public DatasetDescription describe(String name, Optional<Path> dataset, BufferAllocator allocator,
      CancelSignal cancel) {
    acquire(cancel::isCancelled);
    try {
      readyFor(dataset);
      return new DatasetDescriber(connection, engine.filesRoot(), cancel).describe(name, dataset, allocator);
    } catch (SQLException e) {
      throw cancel.isCancelled() ? ThallusException.of(StatusCode.CANCELLED, "describing " + name + " was cancelled")
          : ThallusException.of(StatusCode.INVALID_ARGUMENT, "describing " + name + " failed: " + e.getMessage(), e);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Makes the session's connection ready for another statement (held lock): a result still streaming is read to
   * its end first (DuckDB would close it), and the request's datasets, named or not, are bound.
   */
  private void readyFor(QuerySpec spec) throws SQLException {
    readyFor(spec.dataset());
    namedViews.bind(connection, spec.namedDatasets());
  }

  private void readyFor(Optional<Path> dataset) throws SQLException {
    checkOpen();
    DuckDBResult earlier = streaming;
    if (earlier != null) {
      earlier.readRest();
    }
    if (!dataset.equals(boundDataset)) {
      rebind(dataset);
    }
  }

  /**
   * Runs the statement on the session's own connection. With {@code onlyQueries} it runs it only if DuckDB plans it
   * as a query, and answers null (having run nothing) otherwise.
   */
  QueryResult executeHere(QuerySpec spec, BufferAllocator allocator, CancelSignal cancel, boolean onlyQueries) {
    acquire(cancel::isCancelled);
    PreparedStatement prepared = null;
    try {
      readyFor(spec);
      if (spec.inSessionTransaction() || spec.hasParameterRows()) {
        pin();
      }
      if (spec.inSessionTransaction() && !DuckDBNatives.inTransaction(connection)) {
        run("BEGIN TRANSACTION");
      }
      if (spec.hasParameterRows()) {
        long[] counts = new ParameterRowRuns(connection).runInTransaction(spec, allocator, cancel);
        return QueryResult.of(UpdateCounts.of(counts));
      }
      String sql = spec.sql();
      if (spec.schemaOnly()) {
        QueryResult planned = withoutRows(spec, allocator, cancel);
        if (planned != null) {
          return planned;
        }
      }
      if (onlyQueries || spec.schemaOnly()) {
        // Its kind decides whether it runs (here, beside, or not at all for a schema): DuckDB's planner says.
        prepared = spec.parameters().isEmpty() ? prepareFresh(sql, cancel) : prepared(sql);
        if (DuckDBStatements.kind(prepared) != StatementKind.QUERY) {
          release(prepared);
          // The schema of an update count, without running the statement.
          return onlyQueries ? null : QueryResult.of(UpdateCounts.of(-1));
        }
      } else if (!spec.parameters().isEmpty()) {
        prepared = prepared(sql);
      }
      PreparedStatement running = prepared;
      prepared = null;
      return runStatement(spec, sql, running, allocator, cancel, Set.of());
    } catch (SQLException e) {
      forget(prepared);
      // Whatever it was, a text of several statements may have run some: the session keeps to its connection.
      pin();
      throw DuckDBErrors.failure(e, spec, cancel, engine);
    } catch (RuntimeException e) {
      forget(prepared);
      pin();
      throw e;
    } finally {
      lock.unlock();
    }
  }

  /**
   * The statement's rows planned without producing any ({@code SELECT * FROM (...) LIMIT 0}, see DuckDBStatements);
   * null when DuckDB cannot plan it so (not SELECT-shaped: PRAGMA, EXPLAIN, ... RETURNING, or no query at all).
   * Outside a transaction DuckDB's attempt decides, and a failure costs nothing; inside one a failed plan would
   * abort the transaction, so DuckDB's parser is asked first. Under the lock.
   */
  private QueryResult withoutRows(QuerySpec spec, BufferAllocator allocator, CancelSignal cancel)
      throws SQLException {
    boolean inTransaction = DuckDBNatives.inTransaction(connection);
    if (inTransaction && !DuckDBStatements.selectShaped(connection, spec.sql())) {
      return null;
    }
    String wrapped = DuckDBStatements.withoutRows(spec.sql());
    try {
      return runStatement(spec, wrapped, spec.parameters().isEmpty() ? null : prepared(wrapped), allocator, cancel,
          Set.of());
    } catch (SQLException e) {
      if (inTransaction || cancel.isCancelled()) {
        throw e;
      }
      return null;
    }
  }

  /**
   * Runs {@code sql} ({@code prepared}, with the spec's values, or as a plain statement when null) and answers its
   * rows or its update count; {@code offsetColumns} are TIME WITH TIME ZONE columns as text. Under the lock.
   */
  private QueryResult runStatement(QuerySpec spec, String sql, PreparedStatement prepared, BufferAllocator allocator,
      CancelSignal cancel, Set<Integer> offsetColumns) throws SQLException {
    Statement statement = prepared;
    try {
      OffsetTimeText.Wrapped offsets = prepared == null || !offsetColumns.isEmpty() || !EngineTypeNames.asked(spec)
          ? null : OffsetTimeText.of(connection, sql, prepared.getMetaData());
      if (offsets != null) {
        release(prepared);
        return runStatement(spec, offsets.sql(), spec.parameters().isEmpty() ? prepareFresh(offsets.sql(), cancel)
            : prepared(offsets.sql()), allocator, cancel, offsets.columns());
      }
      // Asked before it runs: the connection cannot answer while the statement's result streams.
      boolean commitsWhenClosed = DuckDBStatements.mayCommitWhenClosed(connection, sql);
      Set<String> databasesBefore = attachments.before(sql);
      boolean hasRows;
      if (prepared == null) {
        // DuckDB's driver runs a plain statement in one call, without a prepared statement's round trips.
        Statement plain = connection.createStatement();
        statement = plain;
        hasRows = DuckDBEngine.cancellable(plain, cancel, () -> plain.execute(sql));
      } else {
        hasRows = DuckDBEngine.cancellable(prepared, cancel, () -> {
          if (!spec.parameters().isEmpty()) {
            DuckDBEngine.bind(prepared, spec.parameters());
          }
          return prepared.execute();
        });
      }
      if (!hasRows) {
        // DuckDB's planner said it is no query: the session may have state of its own from now on.
        pin();
      }
      attachments.after(databasesBefore);
      if (!hasRows) {
        // A statement without rows answers with its update count as DuckDB reports it: the rows an INSERT, UPDATE or
        // DELETE changed, -1 for one that changes no rows (DDL, SET), as DuckDB's own driver says.
        long count = statement.getLargeUpdateCount();
        release(statement);
        return QueryResult.of(UpdateCounts.of(count));
      }
      DuckDBResultSet resultSet = (DuckDBResultSet) statement.getResultSet();
      offsets = prepared != null || !offsetColumns.isEmpty() || !EngineTypeNames.asked(spec) ? null
          : OffsetTimeText.of(connection, sql, resultSet.getMetaData());
      if (offsets != null) {
        // A plain statement's types are known once it runs: it runs again, wrapped (see OffsetTimeText).
        release(statement);
        return runStatement(spec, offsets.sql(), null, allocator, cancel, offsets.columns());
      }
      // Arrow's import leaks when a budget refuses it: it runs where none does, and each batch then moves.
      ImportedBatches.Importing importing = ImportedBatches.open(allocator);
      ArrowReader reader;
      try {
        reader = (ArrowReader) resultSet.arrowExportStream(importing.allocator(), spec.batchRows());
      } catch (RuntimeException e) {
        importing.finish();
        throw e;
      }
      DuckDBResult result = new DuckDBResult(this, statement, resultSet, reader, allocator, importing, spec,
          offsetColumns);
      streaming = result;
      if (commitsWhenClosed) {
        // Its commit comes when its result closes: a split must not begin its parts' snapshots until then.
        result.closing(engine.writes().untilClosed());
      }
      return result;
    } catch (SQLException | RuntimeException e) {
      forget(statement);
      throw e;
    }
  }

  /** From now on every statement of the session runs on its connection (it may have state of its own). */
  private void pin() {
    synchronized (interruptGuard) {
      pinned = true;
    }
  }

  /**
   * Prepares {@code sql} (DuckDB parses, binds and plans it): a cancel while DuckDB prepares interrupts it, as it
   * would interrupt the statement's run.
   */
  private PreparedStatement prepareFresh(String sql, CancelSignal cancel) throws SQLException {
    Object preparing = new Object();
    cancel.onCancel(() -> interrupt(preparing));
    synchronized (interruptGuard) {
      calling = preparing;
    }
    try {
      if (cancel.isCancelled()) {
        throw ThallusException.of(StatusCode.CANCELLED, "the query was cancelled");
      }
      return connection.prepareStatement(sql);
    } finally {
      synchronized (interruptGuard) {
        calling = null;
      }
    }
  }

  /**
   * Writes the batches into the table in one transaction (the session's with autocommit off, else its own), as
   * DuckDB's Arrow C stream scan takes them (no copy of ours); the table is checked before any batch is asked for (an
   * unknown or existing table, a column it lacks or types otherwise); any failure undoes the whole ingest.
   */
  @Override
  public long ingest(IngestSpec spec, ArrowReader batches, BufferAllocator allocator, CancelSignal cancel) {
    return engine.writes().counting(() -> ingestCounted(spec, batches, allocator, cancel));
  }

  private long ingestCounted(IngestSpec spec, ArrowReader batches, BufferAllocator allocator, CancelSignal cancel) {
    acquire(cancel::isCancelled);
    boolean ownTransaction = false;
    try {
      pin();
      checkOpen();
      DuckDBResult earlier = streaming;
      if (earlier != null) {
        earlier.readRest();
      }
      if (spec.transaction() == TransactionMode.SESSION && !DuckDBNatives.inTransaction(connection)) {
        run("BEGIN TRANSACTION");
      }
      ownTransaction = !DuckDBNatives.inTransaction(connection);
      if (ownTransaction) {
        run("BEGIN TRANSACTION");
      }
      long rows;
      String view = INGEST_VIEW + INGESTS.incrementAndGet();
      try (ArrowArrayStream stream = ArrowArrayStream.allocateNew(allocator)) {
        Data.exportArrayStream(allocator, batches, stream);
        ArrowTypeProbe.register(connection, view, stream);
        try {
          String sql = new IngestStatements(connection).statement(spec, view);
          try (Statement insert = connection.createStatement()) {
            rows = DuckDBEngine.cancellable(insert, cancel, () -> insert.executeLargeUpdate(sql));
          }
        } finally {
          try {
            run("DROP VIEW IF EXISTS " + view);
          } catch (SQLException aborted) {
            // The failed statement aborted the transaction; its rollback drops the view, and its error is the one
            // that says why.
          }
        }
      }
      if (ownTransaction) {
        ownTransaction = false;
        run("COMMIT");
      }
      return rows;
    } catch (SQLException e) {
      rollBack(ownTransaction);
      String message = e.getMessage() == null ? e.toString() : e.getMessage();
      if (cancel.isCancelled()) {
        throw ThallusException.of(StatusCode.CANCELLED, "the ingest was cancelled; nothing was written", e);
      }
      ArrowTypeProbe.throwIfRefusedType(message, connection, spec.schema(), allocator, e);
      throw DuckDBErrors.classify(message + (ownTransaction ? "; nothing was written" : ""), e);
    } catch (RuntimeException e) {
      rollBack(ownTransaction);
      throw e;
    } finally {
      lock.unlock();
    }
  }

  private void rollBack(boolean ownTransaction) {
    if (ownTransaction) {
      try {
        run("ROLLBACK");
      } catch (SQLException alreadyOver) {
        // A failed COMMIT has rolled back already.
      }
    }
  }

  /**
   * The session's prepared statement for {@code sql}, prepared once and kept (the {@value #PREPARED_KEPT} most
   * recently used): a statement a client runs again with new values skips DuckDB's parse, bind and plan.
   */
  private PreparedStatement prepared(String sql) throws SQLException {
    PreparedStatement kept = preparedStatements.get(sql);
    if (kept != null && !kept.isClosed()) {
      return kept;
    }
    PreparedStatement fresh = connection.prepareStatement(sql);
    preparedStatements.put(sql, fresh);
    if (preparedStatements.size() > PREPARED_KEPT) {
      var eldest = preparedStatements.entrySet().iterator().next();
      preparedStatements.remove(eldest.getKey());
      release(eldest.getValue());
    }
    return fresh;
  }

  /** Done with a statement: a kept prepared statement stays for its next run, any other closes. Under the lock. */
  void release(Statement statement) {
    if (statement == null || preparedStatements.containsValue(statement)) {
      return;
    }
    DuckDBResult open = streaming;
    if (open != null && open.reads(statement)) {
      // Still streaming: its result closes it when done.
      return;
    }
    DuckDBEngine.closeQuietly(statement);
  }

  /** A statement that failed: DuckDB's driver has closed it, so it is not kept either. Under the lock. */
  private void forget(Statement statement) {
    if (statement != null) {
      preparedStatements.values().remove(statement);
      DuckDBEngine.closeQuietly(statement);
    }
  }

  /** Makes {@code dataset} the session's (the view {@code dataset}, or the attached database as default catalog). */
  private void rebind(Optional<Path> dataset) throws SQLException {
    if (boundDataset.isPresent()) {
      if (DuckDBEngine.isDatabaseFile(boundDataset.get())) {
        run("USE " + engine.defaultCatalog());
      } else {
        run("DROP VIEW IF EXISTS temp.main.dataset");
      }
    }
    boundDataset = Optional.empty();
    if (dataset.isPresent()) {
      engine.bindDataset(connection, dataset.get());
    }
    boundDataset = dataset;
  }

  private void run(String sql) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      statement.execute(sql);
    }
  }

  /**
   * Takes the session's lock, waiting as long as another of the session's calls runs (a query's first batch may
   * take long), but no longer than the caller wants: {@code abandoned} ends the wait.
   */
  void acquire(java.util.function.BooleanSupplier abandoned) {
    try {
      while (!lock.tryLock(LOCK_POLL_MILLIS, TimeUnit.MILLISECONDS)) {
        if (abandoned.getAsBoolean()) {
          throw ThallusException.of(StatusCode.CANCELLED, "cancelled while waiting for another statement of the "
              + "session to finish");
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw ThallusException.of(StatusCode.CANCELLED, "interrupted while waiting for the session");
    }
  }

  /** Takes the lock to close a result: closing must happen, so it waits for the call that runs now to end. */
  void acquireForClose() {
    lock.lock();
  }

  void release() {
    lock.unlock();
  }

  /** Runs a DuckDB call for {@code owner}, so an {@link #interrupt} from owner reaches this call and no other. */
  <T> T calling(Object owner, SqlCall<T> call) throws java.io.IOException {
    synchronized (interruptGuard) {
      calling = owner;
    }
    try {
      return call.run();
    } finally {
      synchronized (interruptGuard) {
        calling = null;
      }
    }
  }

  /** A DuckDB call that reads: what {@link #calling} runs. */
  interface SqlCall<T> {
    T run() throws java.io.IOException;
  }

  /**
   * Stops the DuckDB call that {@code owner} runs now, if any: DuckDB's driver interrupts only a statement that is
   * executing, not a streaming read, which only the connection's own interrupt reaches.
   */
  void interrupt(Object owner) {
    synchronized (interruptGuard) {
      if (calling == owner && !closed && DuckDBNatives.INTERRUPT_AVAILABLE) {
        DuckDBNatives.interrupt(connection);
      }
    }
  }

  /** The result that no longer reads from the connection. */
  void streamingEnded(DuckDBResult result) {
    if (streaming == result) {
      streaming = null;
    }
  }

  private void checkOpen() {
    synchronized (interruptGuard) {
      if (closed) {
        throw ThallusException.of(StatusCode.UNAVAILABLE, "the session has ended");
      }
    }
  }

  /** Rolls back an open transaction (DuckDB does when its connection closes) and drops the session's objects. */
  @Override
  public void close() {
    synchronized (interruptGuard) {
      if (closed) {
        return;
      }
      closed = true;
    }
    lock.lock();
    try {
      DuckDBResult open = streaming;
      if (open != null) {
        open.close();
      }
      preparedStatements.values().forEach(DuckDBEngine::closeQuietly);
      preparedStatements.clear();
      // DuckDB attaches for the whole database; the session's ATTACH ends with it, so its files are free again.
      attachments.detachAll();
      DuckDBEngine.closeQuietly(connection);
    } finally {
      lock.unlock();
    }
  }
}
