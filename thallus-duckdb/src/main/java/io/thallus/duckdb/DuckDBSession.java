package io.thallus.duckdb;

import io.thallus.DatasetDescription;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.engine.CancelSignal;
import io.thallus.engine.EngineSession;
import io.thallus.engine.IngestSpec;
import io.thallus.IngestMode;
import io.thallus.internal.batch.ValidatingStreamReader;
import io.thallus.internal.protocol.InsertStatements;
import io.thallus.engine.QueryResult;
import io.thallus.engine.QuerySpec;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.io.ByteArrayInputStream;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
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
 *   <li>As long as a session has run only queries (SELECT, WITH, FROM, VALUES, SHOW, DESCRIBE, ...), it has no state
 *       of its own: a query that finds the session's connection busy runs beside it, on a DuckDB connection of its
 *       own, and streams as a client with many streams expects.
 *   <li>Once it has run anything else (a write, DDL, SET, BEGIN, manual-commit mode), its statements may depend on
 *       its state, so all of them run on its connection: the session's lock lets one DuckDB call run at a time, and
 *       a statement that finds another result still streaming first reads that result's remaining batches into
 *       memory (under the client's memory budget), where its stream goes on reading them. Every result stays valid
 *       and in order; only the earlier one stops streaming from DuckDB.
 * </ul>
 */
public final class DuckDBSession implements EngineSession {
  private static final Pattern TRANSACTION_STATEMENT = Pattern.compile(
      "(?is)\\s*(BEGIN|START\\s+TRANSACTION|COMMIT|END|ROLLBACK|ABORT)\\b.*");
  private static final Pattern LOCKED_SETTING = Pattern.compile(
      "(?s).*Cannot change configuration option \"+([^\"]+)\"+ - the configuration has been locked.*");
  /** An ATTACH statement: what it attaches belongs to the session and is detached when the session ends. */
  private static final Pattern ATTACH = Pattern.compile("(?is)\\s*ATTACH\\b");
  /** How many prepared statements a session keeps. */
  private static final int PREPARED_KEPT = 32;
  /** The session's name for rows of parameters while an INSERT reads them. */
  private static final String PARAMETER_ROWS_VIEW = "thallus_parameter_rows";
  /** The start of the session's name for the batches of an ingest while DuckDB reads them. */
  private static final String INGEST_VIEW = "thallus_ingest_";
  private static final java.util.concurrent.atomic.AtomicLong INGESTS = new java.util.concurrent.atomic.AtomicLong();
  /** A statement that only reads: the first keyword of a query. */
  private static final Pattern QUERY = Pattern.compile(
      "(?is)\\s*(?:\\(|(?:SELECT|WITH|FROM|VALUES|TABLE|SHOW|DESCRIBE|SUMMARIZE|EXPLAIN)\\b)");
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
  private final LinkedHashMap<String, PreparedStatement> preparedStatements =
      new LinkedHashMap<>(16, 0.75f, true);
  private Optional<Path> boundDataset = Optional.empty();
  /** Databases this session's ATTACH statements attached. */
  private final Set<String> attachedHere = new LinkedHashSet<>();
  private boolean inTransaction;
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
  }

  @Override
  public QueryResult execute(QuerySpec spec, BufferAllocator allocator, CancelSignal cancel) {
    if ("true".equals(spec.options().get(QuerySpec.DESCRIBE_PARAMETERS))) {
      return describeParameters(spec, allocator, cancel);
    }
    boolean query = QUERY.matcher(spec.sql()).lookingAt() && !spec.hasParameterRows()
        && !"false".equals(spec.options().get(QuerySpec.AUTOCOMMIT));
    boolean onCursor;
    synchronized (interruptGuard) {
      onCursor = query && !pinned && (streaming != null || lock.isLocked());
      pinned |= !query;
    }
    if (onCursor) {
      // Nothing of the session is in use: the query runs beside the session's, on a DuckDB connection of its own.
      return engine.execute(spec, allocator, cancel);
    }
    return executeHere(spec, allocator, cancel);
  }

  /**
   * The placeholder types of a statement, prepared on the session's connection (its temporary tables and search
   * path count) and never executed, answered as one row by DuckDB itself.
   */
  private QueryResult describeParameters(QuerySpec spec, BufferAllocator allocator, CancelSignal cancel) {
    List<String> types = new ArrayList<>();
    acquire(cancel::isCancelled);
    try {
      readyFor(spec);
      try (PreparedStatement prepared = connection.prepareStatement(spec.sql())) {
        java.sql.ParameterMetaData parameters = prepared.getParameterMetaData();
        for (int i = 1; i <= parameters.getParameterCount(); i++) {
          types.add(parameters.getParameterTypeName(i));
        }
      }
    } catch (SQLException e) {
      throw failure(e, spec, cancel);
    } finally {
      lock.unlock();
    }
    StringBuilder list = new StringBuilder("SELECT [");
    for (int i = 0; i < types.size(); i++) {
      list.append(i == 0 ? "" : ", ").append(DuckDBEngine.literal(String.valueOf(types.get(i))));
    }
    list.append("]::VARCHAR[] AS parameter_types");
    Map<String, String> options = new java.util.HashMap<>(spec.options());
    options.remove(QuerySpec.DESCRIBE_PARAMETERS);
    return executeHere(new QuerySpec(list.toString(), Optional.empty(), spec.batchRows(), List.of(), false, options),
        allocator, cancel);
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
   * its end first (DuckDB would close it), and the request's dataset is bound.
   */
  private void readyFor(QuerySpec spec) throws SQLException {
    readyFor(spec.dataset());
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

  /** Runs the statement on the session's own connection. */
  DuckDBResult executeHere(QuerySpec spec, BufferAllocator allocator, CancelSignal cancel) {
    acquire(cancel::isCancelled);
    Statement statement = null;
    try {
      readyFor(spec);
      if ("false".equals(spec.options().get(QuerySpec.AUTOCOMMIT)) && !inTransaction) {
        run("BEGIN TRANSACTION");
        inTransaction = true;
      }
      if (spec.hasParameterRows()) {
        return DuckDBResult.updateCounts(runRows(spec, allocator, cancel), allocator);
      }
      String sql = spec.schemaOnly() ? DuckDBEngine.withoutRows(spec.sql()) : spec.sql();
      Matcher transactional = TRANSACTION_STATEMENT.matcher(sql);
      String transactionVerb = transactional.matches() ? transactional.group(1).toUpperCase(Locale.ROOT) : null;
      Set<String> databasesBefore = ATTACH.matcher(sql).lookingAt() ? databases() : null;
      boolean hasRows;
      boolean succeeded = false;
      try {
        if (spec.parameters().isEmpty()) {
          Statement plain = connection.createStatement();
          statement = plain;
          hasRows = DuckDBEngine.cancellable(plain, cancel, () -> plain.execute(sql));
        } else {
          PreparedStatement prepared = prepared(sql);
          statement = prepared;
          hasRows = DuckDBEngine.cancellable(prepared, cancel, () -> {
            DuckDBEngine.bind(prepared, spec.parameters());
            return prepared.execute();
          });
        }
        succeeded = true;
        if (databasesBefore != null) {
          Set<String> added = databases();
          added.removeAll(databasesBefore);
          attachedHere.addAll(added);
        }
      } finally {
        if (transactionVerb != null) {
          // BEGIN opens a transaction only when it succeeds; COMMIT and ROLLBACK end it even when they fail.
          boolean begins = transactionVerb.equals("BEGIN") || transactionVerb.startsWith("START");
          inTransaction = begins ? inTransaction || succeeded : false;
        }
      }
      if (!hasRows) {
        // A statement without rows answers with its update count as DuckDB reports it: the rows an INSERT, UPDATE or
        // DELETE changed, -1 for one that changes no rows (DDL, SET), as DuckDB's own driver says.
        long count = statement.getUpdateCount();
        release(statement);
        return DuckDBResult.updateCount(count, allocator);
      }
      DuckDBResultSet resultSet = (DuckDBResultSet) statement.getResultSet();
      // Arrow's import leaks when a budget refuses it: it runs where none does, and each batch then moves.
      ImportedBatches.Importing importing = ImportedBatches.open(allocator);
      ArrowReader reader;
      try {
        reader = (ArrowReader) resultSet.arrowExportStream(importing.allocator(), spec.batchRows());
      } catch (RuntimeException e) {
        importing.finish();
        throw e;
      }
      DuckDBResult result = new DuckDBResult(this, statement, resultSet, reader, allocator, importing);
      streaming = result;
      return result;
    } catch (SQLException e) {
      forget(statement);
      throw failure(e, spec, cancel);
    } catch (RuntimeException e) {
      forget(statement);
      throw e;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Writes the batches into the table in one transaction (the session's with autocommit off, else one of its own):
   * DuckDB scans them through the Arrow C stream interface, as they arrive, so nothing is copied by us. The table is
   * checked first, before any batch is asked for: an unknown table (append), one that exists (create), a column the
   * table lacks or has with another type. A failure anywhere undoes the whole ingest.
   */
  @Override
  public long ingest(IngestSpec spec, ArrowReader batches, BufferAllocator allocator, CancelSignal cancel) {
    acquire(cancel::isCancelled);
    boolean ownTransaction = false;
    try {
      synchronized (interruptGuard) {
        pinned = true;
      }
      checkOpen();
      DuckDBResult earlier = streaming;
      if (earlier != null) {
        earlier.readRest();
      }
      if ("false".equals(spec.options().get(QuerySpec.AUTOCOMMIT)) && !inTransaction) {
        run("BEGIN TRANSACTION");
        inTransaction = true;
      }
      ownTransaction = !inTransaction;
      if (ownTransaction) {
        run("BEGIN TRANSACTION");
      }
      long rows;
      String view = INGEST_VIEW + INGESTS.incrementAndGet();
      try (ArrowArrayStream stream = ArrowArrayStream.allocateNew(allocator)) {
        Data.exportArrayStream(allocator, batches, stream);
        connection.registerArrowStream(view, stream);
        try {
          String sql = ingestStatement(spec, view);
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
      throw classify(message + (ownTransaction ? "; nothing was written" : ""), e);
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

  /** The statement that writes the view's rows into the table, after checking the table against the batches. */
  private String ingestStatement(IngestSpec spec, String view) throws SQLException {
    String statement = spec.options().get(IngestSpec.INSERT_STATEMENT);
    if (statement != null) {
      // Rows of parameters for an INSERT ... VALUES (?, ...): inserted by position, cast as the INSERT casts.
      int columns = spec.schema().getFields().size();
      InsertStatements.Insert insert = InsertStatements.parse(statement)
          .filter(parsed -> parsed.placeholders() == columns && spec.mode() == IngestMode.APPEND)
          .orElseThrow(() -> ThallusException.of(StatusCode.INVALID_ARGUMENT, "an ingest of rows of parameters "
              + "needs an INSERT INTO t [(columns)] VALUES (?, ...) with one ? per column of the batches ("
              + columns + ") and mode append, not: " + statement));
      return insert.selectingFrom(view);
    }
    String table = spec.table();
    return switch (spec.mode()) {
      case CREATE -> {
        if (columnTypes(table) != null) {
          throw ThallusException.of(StatusCode.ALREADY_EXISTS, "table " + table + " exists already; ingest "
              + "with mode append to add rows to it, or replace to replace it");
        }
        yield "CREATE TABLE " + table + " AS SELECT * FROM " + view;
      }
      case REPLACE -> "CREATE OR REPLACE TABLE " + table + " AS SELECT * FROM " + view;
      case APPEND -> {
        Map<String, String> target = columnTypes(table);
        if (target == null) {
          throw ThallusException.of(StatusCode.NOT_FOUND, "table " + table + " does not exist; ingest with mode "
              + "create to create it from the batches' schema");
        }
        Map<String, String> incoming = incomingTypes(view);
        StringBuilder columns = new StringBuilder();
        for (Map.Entry<String, String> column : incoming.entrySet()) {
          String name = column.getKey();
          String want = target.get(name.toLowerCase(Locale.ROOT));
          if (want == null) {
            throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "column " + name + " of the batches is not a "
                + "column of table " + table + " (its columns: " + String.join(", ", target.keySet()) + ")");
          }
          if (!IngestTypes.fits(column.getValue(), want)) {
            throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "column " + name + " is " + column.getValue()
                + " in the batches but " + want + " in table " + table);
          }
          columns.append(columns.isEmpty() ? "" : ", ").append(quote(name));
        }
        yield "INSERT INTO " + table + " (" + columns + ") SELECT " + columns + " FROM " + view;
      }
    };
  }

  /**
   * The batches' columns and their DuckDB types, as DuckDB binds the view over them (DESCRIBE only binds: it reads
   * no batch).
   */
  private Map<String, String> incomingTypes(String view) throws SQLException {
    Map<String, String> types = new LinkedHashMap<>();
    try (Statement describe = connection.createStatement();
         java.sql.ResultSet columns = describe.executeQuery("DESCRIBE " + view)) {
      while (columns.next()) {
        types.put(columns.getString("column_name"), columns.getString("column_type"));
      }
    }
    return types;
  }

  /**
   * A table's (or view's) columns and their DuckDB types, keyed by lower-case name (DuckDB's names match without
   * case); null when there is none. Looked up in DuckDB's catalog functions rather than by DESCRIBE, whose error
   * for a missing table would abort the session's transaction. The name resolves as DuckDB resolves it: one part in
   * the temporary schema, then the current schema; two parts as schema.table, then catalog.table.
   */
  private Map<String, String> columnTypes(String table) throws SQLException {
    List<String> parts = TableNames.parts(table);
    List<String[]> candidates = new ArrayList<>();
    switch (parts.size()) {
      case 1 -> {
        candidates.add(new String[] {"temp", "main", parts.get(0)});
        candidates.add(new String[] {null, null, parts.get(0)});
      }
      case 2 -> {
        candidates.add(new String[] {null, parts.get(0), parts.get(1)});
        candidates.add(new String[] {parts.get(0), "main", parts.get(1)});
      }
      default -> candidates.add(new String[] {parts.get(0), parts.get(1), parts.get(2)});
    }
    String sql = "SELECT column_name, data_type FROM duckdb_columns() WHERE lower(database_name) = "
        + "lower(coalesce(?, current_database())) AND lower(schema_name) = lower(coalesce(?, current_schema())) "
        + "AND lower(table_name) = lower(?) ORDER BY column_index";
    try (PreparedStatement lookup = connection.prepareStatement(sql)) {
      for (String[] candidate : candidates) {
        for (int i = 0; i < 3; i++) {
          lookup.setString(i + 1, candidate[i]);
        }
        Map<String, String> types = new LinkedHashMap<>();
        try (java.sql.ResultSet columns = lookup.executeQuery()) {
          while (columns.next()) {
            types.put(columns.getString(1).toLowerCase(Locale.ROOT), columns.getString(2));
          }
        }
        if (!types.isEmpty()) {
          return types;
        }
      }
    }
    return null;
  }

  private static String quote(String identifier) {
    return "\"" + identifier.replace("\"", "\"\"") + "\"";
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

  /** The names of the databases attached now. Under the lock. */
  private Set<String> databases() throws SQLException {
    Set<String> names = new HashSet<>();
    try (Statement statement = connection.createStatement();
         java.sql.ResultSet rows = statement.executeQuery("SELECT database_name FROM duckdb_databases()")) {
      while (rows.next()) {
        names.add(rows.getString(1));
      }
    }
    return names;
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

  /**
   * Runs the statement once per row of parameters, all rows in one transaction (the session's, or one of its own):
   * an INSERT ... VALUES of only placeholders as one INSERT ... SELECT from the rows (DuckDB scans the Arrow batch
   * in place), any other statement prepared once and executed per row. Called under the lock.
   */
  private long[] runRows(QuerySpec spec, BufferAllocator allocator, CancelSignal cancel) throws SQLException {
    boolean ownTransaction = !inTransaction;
    if (ownTransaction) {
      run("BEGIN TRANSACTION");
    }
    try {
      long[] counts;
      // The client's rows are checked batch by batch before DuckDB or a getter reads them.
      try (ValidatingStreamReader rows = new ValidatingStreamReader(new ByteArrayInputStream(spec.parameterRows()),
          allocator)) {
        int columns = rows.getVectorSchemaRoot().getFieldVectors().size();
        Optional<InsertStatements.Insert> insert = InsertStatements.parse(spec.sql())
            .filter(statement -> statement.placeholders() == columns);
        try {
          if (insert.isPresent()) {
            counts = insertRows(insert.get(), rows, allocator, cancel);
          } else {
            counts = eachRow(spec.sql(), rows, columns, cancel);
          }
        } catch (SQLException e) {
          // DuckDB pulls the rows and reports a refused batch only as text: the refusal says it better.
          if (rows.refusal() != null) {
            throw rows.refusal();
          }
          throw e;
        }
      } catch (java.io.IOException e) {
        throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "the rows of parameters are not an Arrow IPC stream: "
            + e.getMessage(), e);
      }
      if (ownTransaction) {
        run("COMMIT");
      }
      return counts;
    } catch (SQLException | RuntimeException e) {
      if (ownTransaction) {
        try {
          run("ROLLBACK");
        } catch (SQLException alreadyOver) {
          // A failed COMMIT has rolled back already.
        }
      }
      throw e;
    }
  }

  private long[] insertRows(InsertStatements.Insert target, ArrowStreamReader rows, BufferAllocator allocator,
      CancelSignal cancel) throws SQLException, java.io.IOException {
    long expected = 0;
    try (ArrowArrayStream stream = ArrowArrayStream.allocateNew(allocator)) {
      Data.exportArrayStream(allocator, rows, stream);
      connection.registerArrowStream(PARAMETER_ROWS_VIEW, stream);
      try (Statement insert = connection.createStatement()) {
        String sql = target.selectingFrom(PARAMETER_ROWS_VIEW);
        expected = DuckDBEngine.cancellable(insert, cancel, () -> insert.executeLargeUpdate(sql));
      } finally {
        run("DROP VIEW IF EXISTS " + PARAMETER_ROWS_VIEW);
      }
    }
    // Each row of an INSERT ... VALUES (?, ...) inserts one row: the total is one per row.
    long[] counts = new long[(int) expected];
    java.util.Arrays.fill(counts, 1);
    return counts;
  }

  private long[] eachRow(String sql, ArrowStreamReader rows, int columns, CancelSignal cancel)
      throws SQLException, java.io.IOException {
    List<Long> counts = new ArrayList<>();
    try (PreparedStatement prepared = connection.prepareStatement(sql)) {
      DuckDBEngine.cancellable(prepared, cancel, () -> {
        while (rows.loadNextBatch()) {
          org.apache.arrow.vector.VectorSchemaRoot batch = rows.getVectorSchemaRoot();
          List<Object> values = new ArrayList<>(columns);
          for (int row = 0; row < batch.getRowCount(); row++) {
            if (cancel.isCancelled()) {
              throw ThallusException.of(StatusCode.CANCELLED, "the statement was cancelled");
            }
            values.clear();
            for (org.apache.arrow.vector.FieldVector column : batch.getFieldVectors()) {
              values.add(ParameterValues.at(column, row));
            }
            DuckDBEngine.bind(prepared, values);
            counts.add(prepared.executeLargeUpdate());
          }
        }
        return null;
      });
    }
    return counts.stream().mapToLong(Long::longValue).toArray();
  }

  private void run(String sql) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      statement.execute(sql);
    }
  }

  private ThallusException failure(SQLException e, QuerySpec spec, CancelSignal cancel) {
    String message = e.getMessage() == null ? e.toString() : e.getMessage();
    if (cancel.isCancelled()) {
      // Re-running a cancelled query to learn why it stopped would run it to the end.
      return ThallusException.of(StatusCode.CANCELLED, "the query was cancelled", e);
    }
    if (message.contains(DuckDBEngine.HIDDEN_ERROR)) {
      message = engine.diagnose(spec, cancel).orElse("DuckDB stopped the statement while producing its first rows "
          + "and, streaming, does not say why (DuckDB: " + message + ")");
    }
    return classify(message, e);
  }

  /** DuckDB's message with the status a client can act on. */
  static ThallusException classify(String message, Throwable cause) {
    if (message.contains("Conflict on") || message.contains("write-write conflict")
        || message.contains("Transaction conflict") || message.contains("TransactionContext Error: Conflict")) {
      return ThallusException.of(StatusCode.ABORTED, message
          + " (another transaction changed the same rows; this transaction is aborted: roll back and retry)", cause);
    }
    Matcher locked = LOCKED_SETTING.matcher(message);
    if (locked.matches()) {
      return ThallusException.of(StatusCode.PERMISSION_DENIED, "the setting " + locked.group(1) + " is locked on "
          + "this server (the server's configuration protects its data root and limits); a session may change "
          + "search_path, schema (USE) and variables (SET VARIABLE)", cause);
    }
    if (message.contains("Current transaction is aborted")) {
      return ThallusException.of(StatusCode.ABORTED, message, cause);
    }
    if (message.contains("read-only mode") || message.contains("read only mode")) {
      return ThallusException.of(StatusCode.PERMISSION_DENIED, message + " (the server serves its database "
          + "read-only)", cause);
    }
    return ThallusException.of(StatusCode.INVALID_ARGUMENT, message, cause);
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
      if (calling == owner && !closed && NativeInterrupt.AVAILABLE) {
        NativeInterrupt.interrupt(connection);
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
      if (!attachedHere.isEmpty()) {
        try {
          // DETACH does not run inside a transaction the client left open.
          run("ROLLBACK");
        } catch (SQLException noTransaction) {
          // Nothing was open.
        }
      }
      for (String name : attachedHere) {
        try {
          run("DETACH DATABASE IF EXISTS \"" + name.replace("\"", "\"\"") + "\"");
        } catch (SQLException e) {
          // In use as another session's default catalog: it stays until the database closes.
        }
      }
      DuckDBEngine.closeQuietly(connection);
    } finally {
      lock.unlock();
    }
  }

  /**
   * DuckDB's connection interrupt, which its driver keeps package-private: reached by a method handle, and left out
   * (a streaming read then stops at its next batch) if a later driver moves it.
   */
  private static final class NativeInterrupt {
    private static final MethodHandle CONNECTION_REF;
    private static final MethodHandle INTERRUPT;
    static final boolean AVAILABLE;

    static {
      MethodHandle reference = null;
      MethodHandle interrupt = null;
      try {
        MethodHandles.Lookup connections = MethodHandles.privateLookupIn(DuckDBConnection.class,
            MethodHandles.lookup());
        reference = connections.findGetter(DuckDBConnection.class, "connRef", ByteBuffer.class);
        Class<?> natives = Class.forName("org.duckdb.DuckDBNative");
        interrupt = MethodHandles.privateLookupIn(natives, MethodHandles.lookup())
            .findStatic(natives, "duckdb_jdbc_interrupt", MethodType.methodType(void.class, ByteBuffer.class));
      } catch (ReflectiveOperationException | RuntimeException e) {
        reference = null;
        interrupt = null;
      }
      CONNECTION_REF = reference;
      INTERRUPT = interrupt;
      AVAILABLE = interrupt != null;
    }

    static void interrupt(DuckDBConnection connection) {
      try {
        ByteBuffer reference = (ByteBuffer) CONNECTION_REF.invoke(connection);
        if (reference != null) {
          INTERRUPT.invoke(reference);
        }
      } catch (Throwable ignored) {
        // The connection closed meanwhile: there is nothing left to interrupt.
      }
    }
  }
}
