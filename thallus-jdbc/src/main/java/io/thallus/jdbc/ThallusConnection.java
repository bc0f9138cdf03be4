package io.thallus.jdbc;

import io.thallus.ClientOptions;
import io.thallus.QueryRequest;
import io.thallus.ThallusClient;
import io.thallus.ThallusException;
import io.thallus.Tls;
import java.sql.Array;
import java.sql.Blob;
import java.sql.CallableStatement;
import java.sql.Clob;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.NClob;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLClientInfoException;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.SQLXML;
import java.sql.Savepoint;
import java.sql.Statement;
import java.sql.Struct;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Executor;
import org.apache.arrow.memory.BufferAllocator;

/**
 * One Thallus client connection with its own Arrow allocator: a session on the server (one DuckDB connection), so
 * transactions, temp tables, variables and USE last until it closes. In manual-commit mode every statement runs in
 * the session's transaction, which the server begins with the first statement after a commit or rollback (no round
 * trip of its own). Closing closes the open statements (newest first), then the client (the server rolls back a
 * transaction left open), then the allocator.
 */
final class ThallusConnection implements Connection {
  private final JdbcUrl url;
  private final BufferAllocator allocator;
  private final ThallusClient client;
  private final Set<ThallusStatement> statements = Collections.synchronizedSet(new LinkedHashSet<>());
  private volatile boolean closed;
  private volatile boolean autoCommit = true;
  /** A statement ran in manual-commit mode since the last commit or rollback: the server's transaction is open. */
  private volatile boolean transactionOpen;

  private ThallusConnection(JdbcUrl url, BufferAllocator allocator, ThallusClient client) {
    this.url = url;
    this.allocator = allocator;
    this.client = client;
  }

  static ThallusConnection open(JdbcUrl url) throws SQLException {
    ClientOptions.Builder options = ClientOptions.builder()
        .clientName("thallus-jdbc")
        .batchRows(url.integer(ThallusProperty.BATCH_ROWS))
        .credits(url.integer(ThallusProperty.CREDITS))
        .connectTimeout(Duration.ofSeconds(url.integer(ThallusProperty.CONNECT_TIMEOUT)))
        .timeout(Duration.ofSeconds(url.integer(ThallusProperty.TIMEOUT)))
        .receivePoolBytes((long) url.integer(ThallusProperty.RECEIVE_POOL_MB) << 20);
    for (ThallusProperty credential : List.of(ThallusProperty.USER, ThallusProperty.PASSWORD, ThallusProperty.TOKEN)) {
      String value = url.string(credential);
      if (!value.isEmpty()) {
        options.credential(credential.key(), value);
      }
    }
    if (url.bool(ThallusProperty.TLS)) {
      String trust = url.string(ThallusProperty.TLS_TRUST);
      try {
        Tls tls = trust.isEmpty() ? Tls.client() : Tls.client(java.nio.file.Path.of(trust));
        options.tls(url.bool(ThallusProperty.TLS_VERIFY_HOSTNAME) ? tls : tls.withoutHostnameVerification());
      } catch (ThallusException e) {
        throw Errors.from(e);
      }
    }
    BufferAllocator allocator = ThallusClient.newRootAllocator();
    ThallusClient client = null;
    try {
      client = ThallusClient.connect(allocator, url.location(), options.build());
      ThallusConnection connection = new ThallusConnection(url, allocator, client);
      connection.dataset().ifPresent(dataset ->
          // The server resolves the dataset for a query's schema: a missing one fails here, not at the first query.
          connection.client.schema(QueryRequest.builder("SELECT 1").dataset(dataset).build()));
      return connection;
    } catch (ThallusException e) {
      closeQuietly(client);
      allocator.close();
      throw Errors.connecting(e);
    } catch (RuntimeException e) {
      closeQuietly(client);
      allocator.close();
      throw e;
    }
  }

  private static void closeQuietly(ThallusClient client) {
    if (client != null) {
      try {
        client.close();
      } catch (RuntimeException ignored) {
        // The connect failure is what the caller needs to see.
      }
    }
  }

  ThallusClient client() {
    return client;
  }

  Optional<String> dataset() {
    String dataset = url.string(ThallusProperty.DATASET);
    return dataset.isEmpty() ? Optional.empty() : Optional.of(dataset);
  }

  int batchRows() {
    return url.integer(ThallusProperty.BATCH_ROWS);
  }

  JdbcUrl url() {
    return url;
  }

  void checkOpen() throws SQLException {
    if (closed) {
      throw Errors.closed("connection");
    }
  }

  void statementClosed(ThallusStatement statement) {
    statements.remove(statement);
  }

  private <T extends ThallusStatement> T track(T statement) {
    statements.add(statement);
    return statement;
  }

  @Override
  public Statement createStatement() throws SQLException {
    checkOpen();
    return track(new ThallusStatement(this));
  }

  @Override
  public Statement createStatement(int type, int concurrency) throws SQLException {
    checkCursor(type, concurrency);
    return createStatement();
  }

  @Override
  public Statement createStatement(int type, int concurrency, int holdability) throws SQLException {
    checkCursor(type, concurrency);
    return createStatement();
  }

  @Override
  public PreparedStatement prepareStatement(String sql) throws SQLException {
    checkOpen();
    return track(new ThallusPreparedStatement(this, sql));
  }

  @Override
  public PreparedStatement prepareStatement(String sql, int type, int concurrency) throws SQLException {
    checkCursor(type, concurrency);
    return prepareStatement(sql);
  }

  @Override
  public PreparedStatement prepareStatement(String sql, int type, int concurrency, int holdability)
      throws SQLException {
    checkCursor(type, concurrency);
    return prepareStatement(sql);
  }

  @Override
  public PreparedStatement prepareStatement(String sql, int autoGeneratedKeys) throws SQLException {
    if (autoGeneratedKeys != Statement.NO_GENERATED_KEYS) {
      throw Errors.unsupported("generated keys", "DuckDB has no generated keys; use INSERT ... RETURNING");
    }
    return prepareStatement(sql);
  }

  @Override
  public PreparedStatement prepareStatement(String sql, int[] columnIndexes) throws SQLException {
    throw Errors.unsupported("generated keys", "DuckDB has no generated keys; use INSERT ... RETURNING");
  }

  @Override
  public PreparedStatement prepareStatement(String sql, String[] columnNames) throws SQLException {
    throw Errors.unsupported("generated keys", "DuckDB has no generated keys; use INSERT ... RETURNING");
  }

  private void checkCursor(int type, int concurrency) throws SQLException {
    checkOpen();
    if (type != ResultSet.TYPE_FORWARD_ONLY) {
      throw Errors.unsupported("scrollable result sets");
    }
    if (concurrency != ResultSet.CONCUR_READ_ONLY) {
      throw Errors.unsupported("updatable result sets");
    }
  }

  @Override
  public CallableStatement prepareCall(String sql) throws SQLException {
    throw Errors.unsupported("stored procedures", "DuckDB has no stored procedures");
  }

  @Override
  public CallableStatement prepareCall(String sql, int type, int concurrency) throws SQLException {
    throw Errors.unsupported("stored procedures", "DuckDB has no stored procedures");
  }

  @Override
  public CallableStatement prepareCall(String sql, int type, int concurrency, int holdability)
      throws SQLException {
    throw Errors.unsupported("stored procedures", "DuckDB has no stored procedures");
  }

  @Override
  public String nativeSQL(String sql) throws SQLException {
    checkOpen();
    return sql;
  }

  /**
   * Manual-commit mode: from the next statement on, statements run in one transaction until {@link #commit} or
   * {@link #rollback}. Turning auto-commit back on commits an open transaction, as JDBC asks.
   */
  @Override
  public void setAutoCommit(boolean autoCommit) throws SQLException {
    checkOpen();
    if (autoCommit && !this.autoCommit && transactionOpen) {
      endTransaction("COMMIT");
    }
    this.autoCommit = autoCommit;
  }

  @Override
  public boolean getAutoCommit() throws SQLException {
    checkOpen();
    return autoCommit;
  }

  /** Commits the transaction; in manual-commit mode with no statement since the last end there is nothing to do. */
  @Override
  public void commit() throws SQLException {
    checkOpen();
    if (autoCommit) {
      // DuckDB's own driver answers the same.
      throw new SQLException("cannot commit: no transaction is active (the connection is in auto-commit mode)",
          "25000");
    }
    if (transactionOpen) {
      endTransaction("COMMIT");
    }
  }

  @Override
  public void rollback() throws SQLException {
    checkOpen();
    if (autoCommit) {
      throw new SQLException("cannot roll back: no transaction is active (the connection is in auto-commit mode); "
          + "every statement has committed on its own", "25000");
    }
    if (transactionOpen) {
      endTransaction("ROLLBACK");
    }
  }

  /**
   * Runs COMMIT or ROLLBACK on the server. The transaction is over either way: a COMMIT that fails (a write
   * conflict, SQLState 40001) has rolled back.
   */
  private void endTransaction(String verb) throws SQLException {
    transactionOpen = false;
    try (io.thallus.ThallusStream stream = client.query(QueryRequest.builder(verb).build())) {
      while (stream.loadNextBatch()) {
        // The one-row update count of COMMIT or ROLLBACK: read to its end, where a failure would show.
      }
    } catch (java.io.IOException e) {
      throw new SQLException(verb + " failed: " + e.getMessage(), "08006", e);
    } catch (ThallusException e) {
      if (e.getMessage() != null && e.getMessage().contains("no transaction is active")) {
        // The statement that was to begin it failed before it did: there is nothing to end.
        return;
      }
      throw Errors.from(e);
    }
  }

  /** Ends the transaction a batch of several requests ran in, in auto-commit mode. */
  void endBatchTransaction(String verb) throws SQLException {
    endTransaction(verb);
  }

  BufferAllocator allocator() {
    return allocator;
  }

  /** Whether INSERT ... VALUES batches go on the write path: until a server says its engine takes no ingests. */
  private volatile boolean ingests = true;

  boolean ingestsBatches() {
    return ingests;
  }

  void noIngests() {
    ingests = false;
  }

  /** The same for an ingest (a batch of INSERT ... VALUES rows on the write path). */
  void inSession(io.thallus.IngestRequest.Builder request) {
    if (!autoCommit) {
      request.autoCommit(false);
      transactionOpen = true;
    }
  }

  /** What the next statement's request asks of the session: its transaction, in manual-commit mode. */
  void inSession(QueryRequest.Builder request) {
    if (!autoCommit) {
      request.autoCommit(false);
      transactionOpen = true;
    }
  }

  @Override
  public void close() throws SQLException {
    if (closed) {
      return;
    }
    closed = true;
    List<ThallusStatement> open;
    synchronized (statements) {
      open = new ArrayList<>(statements);
    }
    Collections.reverse(open);
    SQLException failure = null;
    for (ThallusStatement statement : open) {
      try {
        statement.close();
      } catch (SQLException e) {
        failure = failure == null ? e : failure;
      }
    }
    try {
      client.close();
    } catch (ThallusException e) {
      failure = failure == null ? Errors.from(e) : failure;
    } finally {
      try {
        allocator.close();
      } catch (IllegalStateException e) {
        // A result set the caller leaked still holds buffers: say so rather than hide it.
        failure = failure == null ? new SQLException("closing the connection: " + e.getMessage(), "HY000", e)
            : failure;
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  @Override
  public boolean isClosed() {
    return closed;
  }

  @Override
  public DatabaseMetaData getMetaData() throws SQLException {
    checkOpen();
    return new ThallusDatabaseMetaData(this);
  }

  @Override
  public void setReadOnly(boolean readOnly) throws SQLException {
    checkOpen();
  }

  @Override
  public boolean isReadOnly() throws SQLException {
    checkOpen();
    return false;
  }

  @Override
  /** Makes {@code catalog} (an attached database) the session's default, as DuckDB's {@code USE} does. */
  public void setCatalog(String catalog) throws SQLException {
    checkOpen();
    if (catalog == null || catalog.isEmpty()) {
      throw Errors.invalid("setCatalog needs a database name");
    }
    try (Statement statement = createStatement()) {
      statement.execute("USE " + identifier(catalog));
    }
  }

  /** The session's default database on the server. */
  @Override
  public String getCatalog() throws SQLException {
    return single("SELECT current_database()");
  }

  /**
   * DuckDB gives every transaction a snapshot (no dirty or non-repeatable reads; write-write conflicts abort with
   * 40001): repeatable read, as DuckDB's own driver reports it. A weaker level asked for is served by this stronger
   * one, as JDBC allows; serializable is not offered.
   */
  @Override
  public void setTransactionIsolation(int level) throws SQLException {
    checkOpen();
    switch (level) {
      case TRANSACTION_READ_UNCOMMITTED, TRANSACTION_READ_COMMITTED, TRANSACTION_REPEATABLE_READ -> { }
      case TRANSACTION_SERIALIZABLE -> throw Errors.unsupported("TRANSACTION_SERIALIZABLE",
          "DuckDB isolates transactions by snapshot (repeatable read), which is not serializable");
      default -> throw Errors.invalid("not a transaction isolation level: " + level);
    }
  }

  @Override
  public int getTransactionIsolation() throws SQLException {
    checkOpen();
    return TRANSACTION_REPEATABLE_READ;
  }

  @Override
  public SQLWarning getWarnings() throws SQLException {
    checkOpen();
    return null;
  }

  @Override
  public void clearWarnings() throws SQLException {
    checkOpen();
  }

  @Override
  public Map<String, Class<?>> getTypeMap() throws SQLException {
    checkOpen();
    return Map.of();
  }

  @Override
  public void setTypeMap(Map<String, Class<?>> map) throws SQLException {
    if (map != null && !map.isEmpty()) {
      throw Errors.unsupported("custom type maps", "values map to their standard Java types");
    }
  }

  @Override
  public void setHoldability(int holdability) throws SQLException {
    checkOpen();
  }

  @Override
  public int getHoldability() throws SQLException {
    checkOpen();
    return ResultSet.CLOSE_CURSORS_AT_COMMIT;
  }

  @Override
  public Savepoint setSavepoint() throws SQLException {
    throw Errors.unsupported("savepoints", Errors.NO_SAVEPOINTS);
  }

  @Override
  public Savepoint setSavepoint(String name) throws SQLException {
    throw Errors.unsupported("savepoints", Errors.NO_SAVEPOINTS);
  }

  @Override
  public void rollback(Savepoint savepoint) throws SQLException {
    throw Errors.unsupported("savepoints", Errors.NO_SAVEPOINTS);
  }

  @Override
  public void releaseSavepoint(Savepoint savepoint) throws SQLException {
    throw Errors.unsupported("savepoints", Errors.NO_SAVEPOINTS);
  }

  @Override
  public Clob createClob() throws SQLException {
    throw Errors.unsupported("createClob", "pass a String");
  }

  @Override
  public Blob createBlob() throws SQLException {
    throw Errors.unsupported("createBlob", "pass a byte[]");
  }

  @Override
  public NClob createNClob() throws SQLException {
    throw Errors.unsupported("createNClob", "pass a String");
  }

  @Override
  public SQLXML createSQLXML() throws SQLException {
    throw Errors.unsupported("createSQLXML", "DuckDB has no XML type");
  }

  @Override
  public Array createArrayOf(String typeName, Object[] elements) throws SQLException {
    throw Errors.unsupported("createArrayOf", "pass a Java array or List as the parameter");
  }

  @Override
  public Struct createStruct(String typeName, Object[] attributes) throws SQLException {
    throw Errors.unsupported("createStruct", "DuckDB structs are read as java.sql.Struct, not built by the driver");
  }

  /** Asks the server to run a query: the handshake alone would not show that DuckDB still answers. */
  @Override
  public boolean isValid(int timeoutSeconds) throws SQLException {
    if (timeoutSeconds < 0) {
      throw Errors.invalid("timeout must not be negative, got " + timeoutSeconds);
    }
    if (closed) {
      return false;
    }
    // Straight to the client: a check neither begins the manual-commit transaction nor touches a statement.
    QueryRequest.Builder probe = QueryRequest.builder("SELECT 1");
    if (timeoutSeconds > 0) {
      probe.timeout(java.time.Duration.ofSeconds(timeoutSeconds));
    }
    try (io.thallus.ThallusStream stream = client.query(probe.build())) {
      return stream.loadNextBatch() && stream.getVectorSchemaRoot().getRowCount() == 1;
    } catch (ThallusException | java.io.IOException e) {
      return false;
    }
  }

  @Override
  public void setClientInfo(String name, String value) throws SQLClientInfoException {
    throw new SQLClientInfoException("Thallus keeps no client info (" + name + ")", Map.of());
  }

  @Override
  public void setClientInfo(Properties properties) throws SQLClientInfoException {
    if (properties != null && !properties.isEmpty()) {
      throw new SQLClientInfoException("Thallus keeps no client info", Map.of());
    }
  }

  @Override
  public String getClientInfo(String name) throws SQLException {
    checkOpen();
    return null;
  }

  @Override
  public Properties getClientInfo() throws SQLException {
    checkOpen();
    return new Properties();
  }

  /** Makes {@code schema} the session's default schema on the server ({@code SET schema}, as DuckDB's driver does). */
  @Override
  public void setSchema(String schema) throws SQLException {
    checkOpen();
    if (schema == null || schema.isEmpty()) {
      throw Errors.invalid("setSchema needs a schema name");
    }
    try (Statement statement = createStatement()) {
      statement.execute("SET schema = '" + schema.replace("'", "''") + "'");
    }
  }

  /** The session's default schema on the server. */
  @Override
  public String getSchema() throws SQLException {
    return single("SELECT current_schema()");
  }

  private String single(String sql) throws SQLException {
    checkOpen();
    try (Statement statement = createStatement(); ResultSet result = statement.executeQuery(sql)) {
      return result.next() ? result.getString(1) : null;
    }
  }

  private static String identifier(String name) {
    return "\"" + name.replace("\"", "\"\"") + "\"";
  }

  @Override
  public void abort(Executor executor) throws SQLException {
    if (executor == null) {
      throw Errors.invalid("abort needs an executor");
    }
    executor.execute(() -> {
      try {
        close();
      } catch (SQLException ignored) {
        // Aborting: the connection is going away whatever its close reports.
      }
    });
  }

  @Override
  public void setNetworkTimeout(Executor executor, int milliseconds) throws SQLException {
    throw Errors.unsupported("setNetworkTimeout", "set the connection's 'timeout' property instead");
  }

  @Override
  public int getNetworkTimeout() throws SQLException {
    checkOpen();
    return url.integer(ThallusProperty.TIMEOUT) * 1000;
  }

  @Override
  public <T> T unwrap(Class<T> type) throws SQLException {
    return Errors.unwrap(this, type);
  }

  @Override
  public boolean isWrapperFor(Class<?> type) {
    return type.isInstance(this);
  }
}
