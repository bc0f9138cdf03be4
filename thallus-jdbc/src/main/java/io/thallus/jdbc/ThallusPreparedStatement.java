package io.thallus.jdbc;

import io.thallus.QueryRequest;
import io.thallus.StatementDescription;
import io.thallus.ThallusException;
import java.io.IOException;
import java.io.InputStream;
import java.io.Reader;
import java.math.BigDecimal;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.sql.Array;
import io.thallus.ThallusStream;
import java.sql.BatchUpdateException;
import java.sql.Blob;
import java.sql.Clob;
import java.sql.Date;
import java.sql.NClob;
import java.sql.ParameterMetaData;
import java.sql.PreparedStatement;
import java.sql.Ref;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.RowId;
import java.sql.SQLException;
import java.sql.SQLXML;
import java.sql.Time;
import java.sql.Timestamp;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Calendar;
import java.util.List;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * A statement whose {@code ?} values are sent typed with OPEN and bound on the server by a DuckDB prepared
 * statement: the SQL text never has values spliced into it.
 */
final class ThallusPreparedStatement extends ThallusStatement implements PreparedStatement {
  /** Bytes of a batch request kept free of rows (see executeLargeBatch). */
  private static final long REQUEST_MARGIN = 64 << 10;

  private final String sql;
  private final List<Object[]> batches = new ArrayList<>();
  private final BoundValues values = new BoundValues(() -> describe().parameterCount());

  ThallusPreparedStatement(ThallusConnection connection, String sql) throws SQLException {
    super(connection);
    if (sql == null || sql.isBlank()) {
      throw Errors.invalid("empty SQL");
    }
    connection.refuseShardedReads(sql);
    this.sql = sql;
  }

  /** The statement as the server's engine describes it (a round trip; the statement is not run). */
  private StatementDescription describe() throws SQLException {
    try {
      StatementDescription description = connection.client().describeStatement(request(sql, List.of()));
      values.known(description.parameterCount());
      return description;
    } catch (ThallusException e) {
      throw Errors.from(e);
    }
  }

  private List<Object> bound() throws SQLException {
    return Arrays.asList(values.complete());
  }

  private void set(int index, Object value) throws SQLException {
    checkOpen();
    try {
      if (value instanceof Array array) {
        // Read now, so that the values checked are the values sent whatever the caller's Array does later.
        value = io.thallus.ListParameter.of(array);
      }
      ParameterBatch.check(value);
    } catch (IllegalArgumentException e) {
      throw Errors.conversion(e.getMessage());
    }
    values.set(index, value);
  }

  @Override
  public ResultSet executeQuery() throws SQLException {
    return query(sql, bound());
  }

  @Override
  public boolean execute() throws SQLException {
    return run(sql, bound());
  }

  @Override
  public int executeUpdate() throws SQLException {
    return (int) executeLargeUpdate();
  }

  @Override
  public long executeLargeUpdate() throws SQLException {
    return update(sql, bound());
  }

  @Override
  public void addBatch() throws SQLException {
    checkOpen();
    batches.add(values.complete());
  }

  @Override
  public void clearBatch() throws SQLException {
    checkOpen();
    batches.clear();
  }

  @Override
  public int[] executeBatch() throws SQLException {
    long[] counts = executeLargeBatch();
    int[] narrow = new int[counts.length];
    for (int i = 0; i < counts.length; i++) {
      narrow[i] = (int) Math.min(Integer.MAX_VALUE, counts[i]);
    }
    return narrow;
  }

  /**
   * Sends the batch's rows as Arrow batches of parameters, each request as large as the server's frame limit allows;
   * the server runs the statement for every row of a request at once. The rows apply together or not at all: a
   * batch of several requests in auto-commit mode runs in one transaction of its own. On failure nothing of the
   * batch is applied, and the BatchUpdateException carries no update count.
   */
  @Override
  public long[] executeLargeBatch() throws SQLException {
    checkOpen();
    // addBatch made each row's array, so it is normalized in place.
    List<Object[]> rows = new ArrayList<>(batches);
    batches.clear();
    for (Object[] row : rows) {
      for (int i = 0; i < row.length; i++) {
        row[i] = ParameterBatch.normalize(row[i]);
      }
    }
    if (rows.isEmpty()) {
      return new long[0];
    }
    int width = rows.get(0).length;
    if (width == 0) {
      // No ? to bind: the rows are only a repeat count.
      long[] counts = new long[rows.size()];
      for (int i = 0; i < counts.length; i++) {
        counts[i] = update(sql, List.of());
      }
      return counts;
    }
    java.util.Optional<io.thallus.IngestRequest.Builder> ingest = io.thallus.IngestRequest.forInsert(sql, width);
    if (ingest.isPresent() && connection.ingestsBatches()) {
      try {
        long[] counts = ingestRows(ingest.get(), rows);
        if (counts != null) {
          return counts;
        }
      } catch (SQLException e) {
        throw new BatchUpdateException("the batch failed and none of its " + rows.size() + " rows applied: "
            + e.getMessage(), e.getSQLState(), e.getErrorCode(), new long[0], e);
      }
    }
    List<List<Object[]>> requests = new ArrayList<>();
    List<Object[]> current = new ArrayList<>();
    long bytes = 0;
    // The server's frame limit, less room for the SQL, the request's other fields and Arrow's schema, metadata and
    // padding (a few hundred bytes per column).
    long requestBytes = connection.client().maxRequestBytes() - REQUEST_MARGIN - io.netty.buffer.ByteBufUtil.utf8Bytes(sql)
        - 1024L * width;
    for (Object[] row : rows) {
      long size = ParameterBatch.rowBytes(row);
      if (!current.isEmpty() && bytes + size > requestBytes) {
        requests.add(current);
        current = new ArrayList<>();
        bytes = 0;
      }
      current.add(row);
      bytes += size;
    }
    requests.add(current);
    boolean ownTransaction = requests.size() > 1 && connection.getAutoCommit();
    long[] counts = new long[rows.size()];
    int done = 0;
    try {
      for (List<Object[]> request : requests) {
        long[] some = runRows(request, ownTransaction);
        System.arraycopy(some, 0, counts, done, some.length);
        done += some.length;
      }
      if (ownTransaction) {
        connection.endBatchTransaction("COMMIT");
      }
      return counts;
    } catch (SQLException e) {
      if (ownTransaction) {
        try {
          connection.endBatchTransaction("ROLLBACK");
        } catch (SQLException alreadyOver) {
          e.addSuppressed(alreadyOver);
        }
      }
      throw new BatchUpdateException("the batch failed and none of its " + rows.size() + " rows applied: "
          + e.getMessage(), e.getSQLState(), e.getErrorCode(), new long[0], e);
    }
  }

  /**
   * An INSERT ... VALUES (?, ...) batch goes on the write path: its rows as one Arrow batch on the connection's
   * transport (no frame limit to split at), inserted in one transaction (the session's in manual-commit mode), one
   * update count per row. Null when the server's engine takes no ingests (nothing was written).
   */
  private long[] ingestRows(io.thallus.IngestRequest.Builder request, List<Object[]> rows) throws SQLException {
    connection.inSession(request);
    if (queryTimeoutSeconds() > 0) {
      request.timeout(java.time.Duration.ofSeconds(queryTimeoutSeconds()));
    }
    try (VectorSchemaRoot root = ParameterBatch.of(rows, rows.get(0).length, connection.allocator());
         io.thallus.ThallusIngest ingest = connection.client().ingest(request.build(), root.getSchema())) {
      ingest.write(root);
      long written = ingest.finish().rows();
      if (written != rows.size()) {
        throw new SQLException("the server inserted " + written + " rows for a batch of " + rows.size(), "XX000");
      }
      long[] counts = new long[rows.size()];
      Arrays.fill(counts, 1);
      return counts;
    } catch (IllegalArgumentException e) {
      throw Errors.conversion(e.getMessage());
    } catch (ThallusException e) {
      if (e.code() == io.thallus.StatusCode.UNIMPLEMENTED) {
        // A server whose engine takes no ingests: the rows go as a request's parameters from now on.
        connection.noIngests();
        return null;
      }
      throw Errors.from(e);
    }
  }

  private long[] runRows(List<Object[]> rows, boolean inTransaction) throws SQLException {
    QueryRequest.Builder request = requestBuilder(sql);
    if (inTransaction) {
      request.autoCommit(false);
    }
    try (VectorSchemaRoot root = ParameterBatch.of(rows, rows.get(0).length, connection.allocator())) {
      request.parameterRows(root);
    } catch (IllegalArgumentException e) {
      throw Errors.conversion(e.getMessage());
    }
    try (ThallusStream stream = connection.client().query(request.build())) {
      long[] counts = new long[rows.size()];
      int at = 0;
      while (stream.loadNextBatch()) {
        BigIntVector batch = (BigIntVector) stream.getVectorSchemaRoot().getVector(0);
        for (int i = 0; i < batch.getValueCount() && at < counts.length; i++) {
          counts[at++] = batch.get(i);
        }
      }
      if (at != counts.length) {
        throw new SQLException("the server answered " + at + " update counts for " + counts.length + " rows",
            "XX000");
      }
      return counts;
    } catch (java.io.IOException e) {
      throw new SQLException("reading the batch's update counts: " + e.getMessage(), "08006", e);
    } catch (ThallusException e) {
      throw Errors.from(e);
    }
  }

  @Override
  public void clearParameters() throws SQLException {
    checkOpen();
    values.clear();
  }

  /**
   * The result's columns without running the statement, as the server's engine plans them (a query under LIMIT 0);
   * none for a statement that answers no rows.
   */
  @Override
  public ResultSetMetaData getMetaData() throws SQLException {
    checkOpen();
    return new ThallusResultSetMetaData(describe().result().getFields());
  }

  @Override
  public ParameterMetaData getParameterMetaData() throws SQLException {
    checkOpen();
    return new ParameterTypes(describe().parameters());
  }

  @Override
  public void setNull(int index, int sqlType) throws SQLException {
    set(index, null);
  }

  @Override
  public void setNull(int index, int sqlType, String typeName) throws SQLException {
    set(index, null);
  }

  @Override
  public void setBoolean(int index, boolean value) throws SQLException {
    set(index, value);
  }

  @Override
  public void setByte(int index, byte value) throws SQLException {
    set(index, value);
  }

  @Override
  public void setShort(int index, short value) throws SQLException {
    set(index, value);
  }

  @Override
  public void setInt(int index, int value) throws SQLException {
    set(index, value);
  }

  @Override
  public void setLong(int index, long value) throws SQLException {
    set(index, value);
  }

  @Override
  public void setFloat(int index, float value) throws SQLException {
    set(index, value);
  }

  @Override
  public void setDouble(int index, double value) throws SQLException {
    set(index, value);
  }

  @Override
  public void setBigDecimal(int index, BigDecimal value) throws SQLException {
    set(index, value);
  }

  @Override
  public void setString(int index, String value) throws SQLException {
    set(index, value);
  }

  @Override
  public void setNString(int index, String value) throws SQLException {
    set(index, value);
  }

  @Override
  public void setBytes(int index, byte[] value) throws SQLException {
    set(index, value);
  }

  @Override
  public void setDate(int index, Date value) throws SQLException {
    set(index, value);
  }

  @Override
  public void setDate(int index, Date value, Calendar calendar) throws SQLException {
    set(index, value == null || calendar == null ? value
        : value.toInstant().atZone(calendar.getTimeZone().toZoneId()).toLocalDate());
  }

  @Override
  public void setTime(int index, Time value) throws SQLException {
    set(index, value == null ? null : value.toLocalTime());
  }

  @Override
  public void setTime(int index, Time value, Calendar calendar) throws SQLException {
    set(index, value == null || calendar == null ? (value == null ? null : value.toLocalTime())
        : java.time.Instant.ofEpochMilli(value.getTime()).atZone(calendar.getTimeZone().toZoneId()).toLocalTime());
  }

  @Override
  public void setTimestamp(int index, Timestamp value) throws SQLException {
    set(index, value);
  }

  @Override
  public void setTimestamp(int index, Timestamp value, Calendar calendar) throws SQLException {
    set(index, value == null || calendar == null ? value
        : value.toInstant().atZone(calendar.getTimeZone().toZoneId()).toLocalDateTime());
  }

  @Override
  public void setObject(int index, Object value) throws SQLException {
    set(index, value);
  }

  @Override
  public void setObject(int index, Object value, int targetSqlType) throws SQLException {
    set(index, targetSqlType == Types.NULL ? null : value);
  }

  @Override
  public void setObject(int index, Object value, int targetSqlType, int scaleOrLength) throws SQLException {
    setObject(index, value, targetSqlType);
  }

  @Override
  public void setAsciiStream(int index, InputStream value, int length) throws SQLException {
    set(index, value == null ? null : new String(read(value, length), StandardCharsets.US_ASCII));
  }

  @Override
  public void setAsciiStream(int index, InputStream value, long length) throws SQLException {
    set(index, value == null ? null : new String(read(value, length), StandardCharsets.US_ASCII));
  }

  @Override
  public void setAsciiStream(int index, InputStream value) throws SQLException {
    setAsciiStream(index, value, -1L);
  }

  @Override
  @Deprecated
  public void setUnicodeStream(int index, InputStream value, int length) throws SQLException {
    set(index, value == null ? null : new String(read(value, length), StandardCharsets.UTF_16BE));
  }

  @Override
  public void setBinaryStream(int index, InputStream value, int length) throws SQLException {
    set(index, value == null ? null : read(value, length));
  }

  @Override
  public void setBinaryStream(int index, InputStream value, long length) throws SQLException {
    set(index, value == null ? null : read(value, length));
  }

  @Override
  public void setBinaryStream(int index, InputStream value) throws SQLException {
    setBinaryStream(index, value, -1L);
  }

  @Override
  public void setBlob(int index, InputStream value, long length) throws SQLException {
    setBinaryStream(index, value, length);
  }

  @Override
  public void setBlob(int index, InputStream value) throws SQLException {
    setBinaryStream(index, value, -1L);
  }

  @Override
  public void setBlob(int index, Blob value) throws SQLException {
    set(index, value == null ? null : value.getBytes(1, (int) value.length()));
  }

  @Override
  public void setCharacterStream(int index, Reader value, int length) throws SQLException {
    set(index, value == null ? null : read(value, length));
  }

  @Override
  public void setCharacterStream(int index, Reader value, long length) throws SQLException {
    set(index, value == null ? null : read(value, length));
  }

  @Override
  public void setCharacterStream(int index, Reader value) throws SQLException {
    setCharacterStream(index, value, -1L);
  }

  @Override
  public void setNCharacterStream(int index, Reader value, long length) throws SQLException {
    setCharacterStream(index, value, length);
  }

  @Override
  public void setNCharacterStream(int index, Reader value) throws SQLException {
    setCharacterStream(index, value, -1L);
  }

  @Override
  public void setClob(int index, Reader value, long length) throws SQLException {
    setCharacterStream(index, value, length);
  }

  @Override
  public void setClob(int index, Reader value) throws SQLException {
    setCharacterStream(index, value, -1L);
  }

  @Override
  public void setClob(int index, Clob value) throws SQLException {
    set(index, value == null ? null : value.getSubString(1, (int) value.length()));
  }

  @Override
  public void setNClob(int index, Reader value, long length) throws SQLException {
    setCharacterStream(index, value, length);
  }

  @Override
  public void setNClob(int index, Reader value) throws SQLException {
    setCharacterStream(index, value, -1L);
  }

  @Override
  public void setNClob(int index, NClob value) throws SQLException {
    setClob(index, value);
  }

  @Override
  public void setArray(int index, Array value) throws SQLException {
    set(index, value);
  }

  @Override
  public void setRef(int index, Ref value) throws SQLException {
    throw Errors.unsupported("REF parameters");
  }

  @Override
  public void setRowId(int index, RowId value) throws SQLException {
    throw Errors.unsupported("ROWID parameters");
  }

  @Override
  public void setSQLXML(int index, SQLXML value) throws SQLException {
    throw Errors.unsupported("SQLXML parameters");
  }

  @Override
  public void setURL(int index, URL value) throws SQLException {
    set(index, value == null ? null : value.toString());
  }

  /** Reads {@code length} bytes (all, when negative) of a stream parameter. */
  private static byte[] read(InputStream in, long length) throws SQLException {
    try {
      byte[] bytes = length < 0 ? in.readAllBytes() : in.readNBytes((int) Math.min(length, Integer.MAX_VALUE - 8));
      if (length >= 0 && bytes.length < length) {
        throw Errors.invalid("the stream ended after " + bytes.length + " of " + length + " bytes");
      }
      return bytes;
    } catch (IOException e) {
      throw new SQLException("reading a stream parameter: " + e.getMessage(), "HY000", e);
    }
  }

  private static String read(Reader in, long length) throws SQLException {
    try {
      StringBuilder out = new StringBuilder();
      char[] buffer = new char[8192];
      long left = length < 0 ? Long.MAX_VALUE : length;
      int n;
      while (left > 0 && (n = in.read(buffer, 0, (int) Math.min(buffer.length, left))) > 0) {
        out.append(buffer, 0, n);
        left -= n;
      }
      return out.toString();
    } catch (IOException e) {
      throw new SQLException("reading a character stream parameter: " + e.getMessage(), "HY000", e);
    }
  }

  // The plain-SQL forms make no sense on a prepared statement (JDBC says so).

  @Override
  public ResultSet executeQuery(String sql) throws SQLException {
    throw new SQLException("executeQuery(String) on a PreparedStatement; use executeQuery()", "HY000");
  }

  @Override
  public boolean execute(String sql) throws SQLException {
    throw new SQLException("execute(String) on a PreparedStatement; use execute()", "HY000");
  }

  @Override
  public int executeUpdate(String sql) throws SQLException {
    throw new SQLException("executeUpdate(String) on a PreparedStatement; use executeUpdate()", "HY000");
  }

  @Override
  public void addBatch(String sql) throws SQLException {
    throw new SQLException("addBatch(String) on a PreparedStatement; use addBatch()", "HY000");
  }
}
