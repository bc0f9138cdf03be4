package io.thallus.jdbc;

import io.thallus.ClientOptions;
import io.thallus.QueryRequest;
import io.thallus.ThallusClient;
import io.thallus.ThallusException;
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
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
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
  private final OpenStatements statements = new OpenStatements();
  private final SessionTransaction transaction;
  private final ShardedRefusal shardedRefusal;
  private volatile boolean closed;
  /** Whether INSERT ... VALUES batches go on the write path: until a server says its engine takes no ingests. */
  private volatile boolean ingests = true;

  private ThallusConnection(JdbcUrl url, BufferAllocator allocator, ThallusClient client) {
    this.url = url;
    this.allocator = allocator;
    this.client = client;
    this.transaction = new SessionTransaction(client);
    this.shardedRefusal = new ShardedRefusal(client, url.location());
  }

  static ThallusConnection open(JdbcUrl url) throws SQLException {
    ClientOptions options = UrlClientOptions.of(url);
    BufferAllocator allocator = ThallusClient.newRootAllocator();
    ThallusClient client = null;
    try {
      client = ThallusClient.connect(allocator, url.location(), options);
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

  /** Refuses {@code sql} if it reads a sharded dataset of the server ({@link ShardedRefusal}). */
  void refuseShardedReads(String sql) throws SQLException {
    shardedRefusal.check(sql);
  }

  Optional<String> dataset() {
    String dataset = url.string(ThallusProperty.DATASET);
    return dataset.isEmpty() ? Optional.empty() : Optional.of(dataset);
  }

  int batchRows() {
    return url.integer(ThallusProperty.BATCH_ROWS);
  }

  /** The parallel streams a query's rows may come on (the {@code streams} property). */
  int streams() {
    return url.integer(ThallusProperty.STREAMS);
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

  @Override
  public Statement createStatement() throws SQLException {
    checkOpen();
    return statements.add(new ThallusStatement(this));
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
    return statements.add(new ThallusPreparedStatement(this, sql));
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

  /** Manual-commit mode from the next statement on; turning auto-commit back on commits an open transaction. */
  @Override
  public void setAutoCommit(boolean autoCommit) throws SQLException {
    checkOpen();
    transaction.setAutoCommit(autoCommit);
  }

  @Override
  public boolean getAutoCommit() throws SQLException {
    checkOpen();
    return transaction.autoCommit();
  }

  @Override
  public void commit() throws SQLException {
    checkOpen();
    transaction.commit();
  }

  @Override
  public void rollback() throws SQLException {
    checkOpen();
    transaction.rollback();
  }

  /** Ends the transaction a batch of several requests ran in, in auto-commit mode. */
  void endBatchTransaction(String verb) throws SQLException {
    transaction.end(verb);
  }

  BufferAllocator allocator() {
    return allocator;
  }

  boolean ingestsBatches() {
    return ingests;
  }

  void noIngests() {
    ingests = false;
  }

  /** What the next statement's request asks of the session: its transaction, in manual-commit mode. */
  void inSession(QueryRequest.Builder request) {
    transaction.join(request);
  }

  /** The same for an ingest (a batch of INSERT ... VALUES rows on the write path). */
  void inSession(io.thallus.IngestRequest.Builder request) {
    transaction.join(request);
  }

  @Override
  public void close() throws SQLException {
    if (closed) {
      return;
    }
    closed = true;
    SQLException failure = statements.closeAll();
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

  /** Any level up to repeatable read, which DuckDB's snapshots give (see {@link SessionTransaction#checkIsolation}). */
  @Override
  public void setTransactionIsolation(int level) throws SQLException {
    checkOpen();
    SessionTransaction.checkIsolation(level);
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
  /**
   * A list to bind as a parameter, as DuckDB's driver makes one: {@code typeName} is the SQL type of the elements
   * ({@code INTEGER}, {@code VARCHAR[]} for a list of lists, whose elements are arrays made here).
   */
  public Array createArrayOf(String typeName, Object[] elements) throws SQLException {
    checkOpen();
    if (elements == null) {
      throw Errors.invalid("createArrayOf needs the elements (an empty array for an empty list), not null");
    }
    try {
      return new io.thallus.ListParameter(typeName, java.util.Arrays.asList(elements));
    } catch (IllegalArgumentException e) {
      throw Errors.invalid(e.getMessage());
    }
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
