package io.thallus.jdbc;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.Reader;
import java.io.StringReader;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;
import java.sql.Array;
import java.sql.Blob;
import java.sql.Clob;
import java.sql.Date;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.sql.Time;
import java.sql.Timestamp;
import java.util.Calendar;
import java.util.List;
import java.util.Map;
import javax.sql.rowset.serial.SerialBlob;
import javax.sql.rowset.serial.SerialClob;

/**
 * A forward-only, read-only result set over Arrow batches: every getter reads the current batch's vectors in place
 * (see {@link ColumnReader} and {@link Values}) at the row its {@link RowCursor} stands on; getters by label are
 * {@link ByLabelResultSet}'s. Closing it ends the stream and returns the batch's buffers.
 */
final class ThallusResultSet extends ByLabelResultSet {
  private final ThallusStatement statement;
  private final Rows rows;
  private final List<ColumnReader> readers;
  private final ThallusResultSetMetaData metaData;
  private final RowCursor cursor;
  private final ColumnLabels labels;
  private boolean wasNull;
  private boolean closed;

  ThallusResultSet(ThallusStatement statement, Rows rows) {
    this.statement = statement;
    this.rows = rows;
    this.readers = rows.readers();
    this.metaData = new ThallusResultSetMetaData(readers.stream().map(r -> r.field).toList());
    this.cursor = new RowCursor(rows);
    this.labels = new ColumnLabels(readers);
  }

  @Override
  public boolean next() throws SQLException {
    checkOpen();
    return cursor.next();
  }

  /** Stops the query; the next {@link #next()} reports the cancellation. */
  void cancel() {
    rows.cancel();
  }

  @Override
  public void close() throws SQLException {
    if (closed) {
      return;
    }
    closed = true;
    try {
      rows.close();
    } finally {
      if (statement != null) {
        statement.resultSetClosed(this);
      }
    }
  }

  @Override
  public boolean isClosed() {
    return closed;
  }

  private void checkOpen() throws SQLException {
    if (closed) {
      throw Errors.closed("result set");
    }
  }

  private ColumnReader reader(int column) throws SQLException {
    checkOpen();
    if (column < 1 || column > readers.size()) {
      throw Errors.badColumn("column " + column + " is outside 1.." + readers.size());
    }
    cursor.checkOnRow();
    return readers.get(column - 1);
  }

  /** The current row's natural value of a column, remembering whether it was NULL. */
  private Object value(int column) throws SQLException {
    Object value = reader(column).value(cursor.row());
    wasNull = value == null;
    return value;
  }

  @Override
  public boolean wasNull() throws SQLException {
    checkOpen();
    return wasNull;
  }

  @Override
  public String getString(int column) throws SQLException {
    return Values.format(value(column));
  }

  @Override
  public boolean getBoolean(int column) throws SQLException {
    return Values.toBoolean(value(column));
  }

  @Override
  public byte getByte(int column) throws SQLException {
    return (byte) whole(column, Byte.MIN_VALUE, Byte.MAX_VALUE, "byte");
  }

  @Override
  public short getShort(int column) throws SQLException {
    return (short) whole(column, Short.MIN_VALUE, Short.MAX_VALUE, "short");
  }

  @Override
  public int getInt(int column) throws SQLException {
    return (int) whole(column, Integer.MIN_VALUE, Integer.MAX_VALUE, "int");
  }

  @Override
  public long getLong(int column) throws SQLException {
    return whole(column, Long.MIN_VALUE, Long.MAX_VALUE, "long");
  }

  private long whole(int column, long min, long max, String target) throws SQLException {
    ColumnReader reader = reader(column);
    int row = cursor.row();
    if (reader.hasLong()) {
      // The hot path: no boxing for integer columns.
      if (reader.isNull(row)) {
        wasNull = true;
        return 0;
      }
      wasNull = false;
      long value = reader.longValue(row);
      if (value < min || value > max) {
        throw Errors.outOfRange(value + " in column " + column + " does not fit a " + target);
      }
      return value;
    }
    return Values.toLong(value(column), min, max, target);
  }

  @Override
  public float getFloat(int column) throws SQLException {
    return (float) getDouble(column);
  }

  @Override
  public double getDouble(int column) throws SQLException {
    ColumnReader reader = reader(column);
    int row = cursor.row();
    if (reader.hasDouble() || reader.hasLong()) {
      if (reader.isNull(row)) {
        wasNull = true;
        return 0;
      }
      wasNull = false;
      return reader.hasDouble() ? reader.doubleValue(row) : reader.longValue(row);
    }
    return Values.toDouble(value(column));
  }

  @Override
  @Deprecated
  public BigDecimal getBigDecimal(int column, int scale) throws SQLException {
    BigDecimal value = getBigDecimal(column);
    return value == null ? null : value.setScale(scale, RoundingMode.HALF_UP);
  }

  @Override
  public BigDecimal getBigDecimal(int column) throws SQLException {
    return Values.toBigDecimal(value(column));
  }

  @Override
  public byte[] getBytes(int column) throws SQLException {
    return Values.toBytes(value(column));
  }

  @Override
  public Date getDate(int column) throws SQLException {
    return Values.toDate(value(column), null);
  }

  @Override
  public Date getDate(int column, Calendar calendar) throws SQLException {
    return Values.toDate(value(column), calendar);
  }

  @Override
  public Time getTime(int column) throws SQLException {
    return Values.toTime(value(column), null);
  }

  @Override
  public Time getTime(int column, Calendar calendar) throws SQLException {
    return Values.toTime(value(column), calendar);
  }

  @Override
  public Timestamp getTimestamp(int column) throws SQLException {
    return Values.toTimestamp(value(column), null);
  }

  @Override
  public Timestamp getTimestamp(int column, Calendar calendar) throws SQLException {
    return Values.toTimestamp(value(column), calendar);
  }

  @Override
  public InputStream getAsciiStream(int column) throws SQLException {
    String text = getString(column);
    return text == null ? null : new ByteArrayInputStream(text.getBytes(StandardCharsets.US_ASCII));
  }

  @Override
  @Deprecated
  public InputStream getUnicodeStream(int column) throws SQLException {
    String text = getString(column);
    return text == null ? null : new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_16BE));
  }

  @Override
  public InputStream getBinaryStream(int column) throws SQLException {
    byte[] bytes = getBytes(column);
    return bytes == null ? null : new ByteArrayInputStream(bytes);
  }

  @Override
  public Reader getCharacterStream(int column) throws SQLException {
    String text = getString(column);
    return text == null ? null : new StringReader(text);
  }

  @Override
  public Reader getNCharacterStream(int column) throws SQLException {
    return getCharacterStream(column);
  }

  @Override
  public String getNString(int column) throws SQLException {
    return getString(column);
  }

  @Override
  public Object getObject(int column) throws SQLException {
    return Values.toJdbc(value(column));
  }

  @Override
  public <T> T getObject(int column, Class<T> type) throws SQLException {
    if (type == null) {
      throw Errors.invalid("getObject needs a type");
    }
    return Values.convert(value(column), type);
  }

  @Override
  public Object getObject(int column, Map<String, Class<?>> map) throws SQLException {
    if (map != null && !map.isEmpty()) {
      throw Errors.unsupported("custom type maps", "values map to their standard Java types");
    }
    return getObject(column);
  }

  @Override
  public Array getArray(int column) throws SQLException {
    Object value = value(column);
    if (value == null) {
      return null;
    }
    if (value instanceof List<?> list) {
      return new ThallusArray(list);
    }
    throw Values.cannot(value, "java.sql.Array");
  }

  @Override
  public Blob getBlob(int column) throws SQLException {
    byte[] bytes = getBytes(column);
    return bytes == null ? null : new SerialBlob(bytes);
  }

  @Override
  public Clob getClob(int column) throws SQLException {
    String text = getString(column);
    return text == null ? null : new SerialClob(text.toCharArray());
  }

  @Override
  public int findColumn(String label) throws SQLException {
    checkOpen();
    return labels.find(label);
  }

  // Cursor position: forward only.

  @Override
  public boolean isBeforeFirst() throws SQLException {
    checkOpen();
    return cursor.isBeforeFirst();
  }

  @Override
  public boolean isAfterLast() throws SQLException {
    checkOpen();
    return cursor.isAfterLast();
  }

  @Override
  public boolean isFirst() throws SQLException {
    checkOpen();
    return cursor.isFirst();
  }

  @Override
  public boolean isLast() throws SQLException {
    throw Errors.unsupported("isLast (it would need the next batch)");
  }

  @Override
  public int getRow() throws SQLException {
    checkOpen();
    return cursor.rowNumber();
  }

  @Override
  public void beforeFirst() throws SQLException {
    throw Errors.unsupported("beforeFirst");
  }

  @Override
  public void afterLast() throws SQLException {
    throw Errors.unsupported("afterLast");
  }

  @Override
  public boolean first() throws SQLException {
    throw Errors.unsupported("first");
  }

  @Override
  public boolean last() throws SQLException {
    throw Errors.unsupported("last");
  }

  @Override
  public boolean absolute(int row) throws SQLException {
    throw Errors.unsupported("absolute");
  }

  @Override
  public boolean relative(int rows) throws SQLException {
    throw Errors.unsupported("relative");
  }

  @Override
  public boolean previous() throws SQLException {
    throw Errors.unsupported("previous");
  }

  @Override
  public void setFetchDirection(int direction) throws SQLException {
    checkOpen();
    if (direction != FETCH_FORWARD) {
      throw Errors.unsupported("a fetch direction other than FETCH_FORWARD");
    }
  }

  @Override
  public int getFetchDirection() {
    return FETCH_FORWARD;
  }

  /** The batch size was fixed when the query was opened; a later hint has nothing left to change. */
  @Override
  public void setFetchSize(int rows) throws SQLException {
    checkOpen();
    if (rows < 0) {
      throw Errors.invalid("fetch size must not be negative, got " + rows);
    }
  }

  @Override
  public int getFetchSize() throws SQLException {
    return statement == null ? 0 : statement.getFetchSize();
  }

  @Override
  public int getType() {
    return TYPE_FORWARD_ONLY;
  }

  @Override
  public int getConcurrency() {
    return CONCUR_READ_ONLY;
  }

  @Override
  public int getHoldability() {
    return CLOSE_CURSORS_AT_COMMIT;
  }

  @Override
  public Statement getStatement() {
    return statement;
  }

  @Override
  public ResultSetMetaData getMetaData() throws SQLException {
    checkOpen();
    return metaData;
  }

  @Override
  public SQLWarning getWarnings() throws SQLException {
    checkOpen();
    return null;
  }

  @Override
  public void clearWarnings() {}

  @Override
  public <T> T unwrap(Class<T> type) throws SQLException {
    return Errors.unwrap(this, type);
  }

  @Override
  public boolean isWrapperFor(Class<?> type) {
    return type.isInstance(this);
  }
}
