package io.thallus.jdbc;

import io.thallus.QueryRequest;
import io.thallus.ThallusException;
import io.thallus.ThallusStream;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs SQL on the server, one stream per execution. {@code setFetchSize} sets the Arrow batch size,
 * {@code setMaxRows} cuts the result, {@code setQueryTimeout} becomes the server's deadline for the query, and
 * {@code cancel} sends CANCEL for the running result.
 */
class ThallusStatement implements Statement {
  final ThallusConnection connection;
  private final List<String> batch = new ArrayList<>();
  private volatile ThallusResultSet current;
  private int fetchSize;
  private long maxRows;
  private int queryTimeoutSeconds;
  /** The last statement's update count until read, else -1. */
  private long updateCount = -1;
  private boolean closeOnCompletion;
  private volatile boolean closed;

  ThallusStatement(ThallusConnection connection) {
    this.connection = connection;
  }

  void checkOpen() throws SQLException {
    if (closed) {
      throw Errors.closed("statement");
    }
    connection.checkOpen();
  }

  /**
   * Runs a statement with this statement's settings, as {@code execute} does (the previous result set is closed
   * first): true when it answered with a result set (now the current one), false when it answered with an update
   * count (now {@link #getUpdateCount}), as DuckDB's own driver tells them apart.
   */
  boolean run(String sql, List<Object> parameters) throws SQLException {
    checkOpen();
    closeCurrent();
    updateCount = -1;
    QueryRequest request = request(sql, parameters);
    try {
      ThallusStream stream = connection.client().query(request);
      try {
        if (stream.isUpdateCount()) {
          // Read here and closed, and no result set of this statement: closeOnCompletion does not close it.
          updateCount = countOf(new ThallusResultSet(null, new StreamRows(stream, 0)));
          return false;
        }
        current = new ThallusResultSet(this, new StreamRows(stream, maxRows));
        return true;
      } catch (SQLException | RuntimeException e) {
        stream.close();
        throw e;
      }
    } catch (ThallusException e) {
      throw Errors.from(e);
    }
  }

  /** {@code executeQuery}: a statement that answers with an update count is an error, as in DuckDB's driver. */
  ResultSet query(String sql, List<Object> parameters) throws SQLException {
    if (!run(sql, parameters)) {
      throw new SQLException("executeQuery() can only be used with statements that return a result set; this one "
          + "changed " + updateCount + " rows (use execute() or executeUpdate())", "07000");
    }
    return current;
  }

  /** {@code executeUpdate}: a statement that answers with a result set is an error, as in DuckDB's driver. */
  long update(String sql, List<Object> parameters) throws SQLException {
    if (run(sql, parameters)) {
      closeCurrent();
      throw new SQLException("executeUpdate() can only be used with statements that return no result set (INSERT, "
          + "UPDATE, DELETE, DDL); use executeQuery()", "07000");
    }
    return updateCount;
  }

  QueryRequest request(String sql, List<Object> parameters) throws SQLException {
    return requestBuilder(sql).parameters(parameters).build();
  }

  /** The statement's query timeout in seconds (0: none). */
  int queryTimeoutSeconds() {
    return queryTimeoutSeconds;
  }

  /** A request for {@code sql} with this statement's settings and the connection's dataset and transaction. */
  QueryRequest.Builder requestBuilder(String sql) throws SQLException {
    if (sql == null || sql.isBlank()) {
      throw Errors.invalid("empty SQL");
    }
    connection.refuseShardedReads(sql);
    // DuckDB's type names where Arrow's do not tell (UHUGEINT, UUID, BIT, ...): values read as DuckDB's driver reads them.
    QueryRequest.Builder request = QueryRequest.builder(sql).engineTypeNames(true);
    connection.dataset().ifPresent(request::dataset);
    connection.inSession(request);
    int rows = fetchSize > 0 ? fetchSize : connection.batchRows();
    if (maxRows > 0 && maxRows < rows) {
      rows = (int) maxRows;
    }
    request.batchRows(rows).streams(connection.streams());
    if (queryTimeoutSeconds > 0) {
      request.timeout(Duration.ofSeconds(queryTimeoutSeconds));
    }
    return request;
  }

  private void closeCurrent() throws SQLException {
    ThallusResultSet open = current;
    current = null;
    if (open != null) {
      open.close();
    }
  }

  void resultSetClosed(ThallusResultSet resultSet) throws SQLException {
    if (current == resultSet) {
      current = null;
    }
    if (closeOnCompletion && current == null) {
      close();
    }
  }

  @Override
  public ResultSet executeQuery(String sql) throws SQLException {
    return query(sql, List.of());
  }

  @Override
  public boolean execute(String sql) throws SQLException {
    return run(sql, List.of());
  }

  @Override
  public int executeUpdate(String sql) throws SQLException {
    return (int) executeLargeUpdate(sql);
  }

  @Override
  public long executeLargeUpdate(String sql) throws SQLException {
    return update(sql, List.of());
  }

  /** DuckDB answers a statement that changes rows with one row, one column: how many it changed. */
  private static long countOf(ThallusResultSet resultSet) throws SQLException {
    try (resultSet) {
      if (resultSet.getMetaData().getColumnCount() != 1 || !resultSet.next()) {
        throw new SQLException("the server marked an update count but sent no count", "07000");
      }
      return resultSet.getLong(1);
    }
  }

  @Override
  public ResultSet getResultSet() throws SQLException {
    checkOpen();
    return current;
  }

  @Override
  public int getUpdateCount() throws SQLException {
    return (int) Math.min(Integer.MAX_VALUE, getLargeUpdateCount());
  }

  @Override
  public boolean getMoreResults() throws SQLException {
    checkOpen();
    closeCurrent();
    updateCount = -1;
    return false;
  }

  @Override
  public boolean getMoreResults(int current) throws SQLException {
    if (current == KEEP_CURRENT_RESULT) {
      throw Errors.unsupported("KEEP_CURRENT_RESULT");
    }
    return getMoreResults();
  }

  @Override
  public void cancel() throws SQLException {
    checkOpen();
    ThallusResultSet running = current;
    if (running != null) {
      running.cancel();
    }
  }

  @Override
  public void close() throws SQLException {
    if (closed) {
      return;
    }
    closed = true;
    try {
      closeCurrent();
    } finally {
      connection.statementClosed(this);
    }
  }

  @Override
  public boolean isClosed() {
    return closed;
  }

  @Override
  public void setFetchSize(int rows) throws SQLException {
    checkOpen();
    if (rows < 0) {
      throw Errors.invalid("fetch size must not be negative, got " + rows);
    }
    fetchSize = rows;
  }

  @Override
  public int getFetchSize() throws SQLException {
    checkOpen();
    return fetchSize;
  }

  @Override
  public void setMaxRows(int max) throws SQLException {
    setLargeMaxRows(max);
  }

  @Override
  public void setLargeMaxRows(long max) throws SQLException {
    checkOpen();
    if (max < 0) {
      throw Errors.invalid("max rows must not be negative, got " + max);
    }
    maxRows = max;
  }

  @Override
  public int getMaxRows() throws SQLException {
    return (int) Math.min(Integer.MAX_VALUE, getLargeMaxRows());
  }

  @Override
  public long getLargeMaxRows() throws SQLException {
    checkOpen();
    return maxRows;
  }

  @Override
  public void setQueryTimeout(int seconds) throws SQLException {
    checkOpen();
    if (seconds < 0) {
      throw Errors.invalid("query timeout must not be negative, got " + seconds);
    }
    queryTimeoutSeconds = seconds;
  }

  @Override
  public int getQueryTimeout() throws SQLException {
    checkOpen();
    return queryTimeoutSeconds;
  }

  @Override
  public long getLargeUpdateCount() throws SQLException {
    checkOpen();
    // Once per result, as JDBC asks: a second call (or one after getMoreResults) says there is none.
    long count = updateCount;
    updateCount = -1;
    return count;
  }

  @Override
  public void addBatch(String sql) throws SQLException {
    checkOpen();
    batch.add(sql);
  }

  @Override
  public void clearBatch() throws SQLException {
    checkOpen();
    batch.clear();
  }

  @Override
  public int[] executeBatch() throws SQLException {
    checkOpen();
    List<String> statements = List.copyOf(batch);
    batch.clear();
    int[] counts = new int[statements.size()];
    for (int i = 0; i < counts.length; i++) {
      counts[i] = (int) Math.min(Integer.MAX_VALUE, update(statements.get(i), List.of()));
    }
    return counts;
  }

  @Override
  public Connection getConnection() throws SQLException {
    checkOpen();
    return connection;
  }

  @Override
  public int getFetchDirection() {
    return ResultSet.FETCH_FORWARD;
  }

  @Override
  public void setFetchDirection(int direction) throws SQLException {
    if (direction != ResultSet.FETCH_FORWARD) {
      throw Errors.unsupported("a fetch direction other than FETCH_FORWARD");
    }
  }

  @Override
  public int getResultSetConcurrency() {
    return ResultSet.CONCUR_READ_ONLY;
  }

  @Override
  public int getResultSetType() {
    return ResultSet.TYPE_FORWARD_ONLY;
  }

  @Override
  public int getResultSetHoldability() {
    return ResultSet.CLOSE_CURSORS_AT_COMMIT;
  }

  @Override
  public int getMaxFieldSize() {
    return 0;
  }

  @Override
  public void setMaxFieldSize(int max) throws SQLException {
    checkOpen();
  }

  @Override
  public void setEscapeProcessing(boolean enable) throws SQLException {
    checkOpen();
  }

  @Override
  public SQLWarning getWarnings() throws SQLException {
    checkOpen();
    return null;
  }

  @Override
  public void clearWarnings() {}

  @Override
  public void setCursorName(String name) throws SQLException {
    throw Errors.unsupported("named cursors");
  }

  @Override
  public ResultSet getGeneratedKeys() throws SQLException {
    throw Errors.unsupported("generated keys", "DuckDB has no generated keys; use INSERT ... RETURNING");
  }

  @Override
  public int executeUpdate(String sql, int autoGeneratedKeys) throws SQLException {
    noKeys(autoGeneratedKeys == NO_GENERATED_KEYS);
    return executeUpdate(sql);
  }

  @Override
  public int executeUpdate(String sql, int[] columnIndexes) throws SQLException {
    noKeys(columnIndexes == null || columnIndexes.length == 0);
    return executeUpdate(sql);
  }

  @Override
  public int executeUpdate(String sql, String[] columnNames) throws SQLException {
    noKeys(columnNames == null || columnNames.length == 0);
    return executeUpdate(sql);
  }

  @Override
  public boolean execute(String sql, int autoGeneratedKeys) throws SQLException {
    noKeys(autoGeneratedKeys == NO_GENERATED_KEYS);
    return execute(sql);
  }

  @Override
  public boolean execute(String sql, int[] columnIndexes) throws SQLException {
    noKeys(columnIndexes == null || columnIndexes.length == 0);
    return execute(sql);
  }

  @Override
  public boolean execute(String sql, String[] columnNames) throws SQLException {
    noKeys(columnNames == null || columnNames.length == 0);
    return execute(sql);
  }

  private static void noKeys(boolean none) throws SQLException {
    if (!none) {
      throw Errors.unsupported("generated keys", "DuckDB has no generated keys; use INSERT ... RETURNING");
    }
  }

  @Override
  public void setPoolable(boolean poolable) throws SQLException {
    checkOpen();
  }

  @Override
  public boolean isPoolable() {
    return false;
  }

  @Override
  public void closeOnCompletion() throws SQLException {
    checkOpen();
    closeOnCompletion = true;
  }

  @Override
  public boolean isCloseOnCompletion() {
    return closeOnCompletion;
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
