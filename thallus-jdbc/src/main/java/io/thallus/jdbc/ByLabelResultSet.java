package io.thallus.jdbc;

import java.io.InputStream;
import java.io.Reader;
import java.math.BigDecimal;
import java.sql.Array;
import java.sql.Blob;
import java.sql.Clob;
import java.sql.Date;
import java.sql.SQLException;
import java.sql.Time;
import java.sql.Timestamp;
import java.util.Calendar;
import java.util.Map;

/**
 * A result set's getters by column label: each finds the column ({@link #findColumn}) and reads it with the getter
 * by index, so a subclass reads values in one place only.
 */
abstract class ByLabelResultSet extends ReadOnlyResultSet {
  @Override
  public String getString(String label) throws SQLException {
    return getString(findColumn(label));
  }

  @Override
  public boolean getBoolean(String label) throws SQLException {
    return getBoolean(findColumn(label));
  }

  @Override
  public byte getByte(String label) throws SQLException {
    return getByte(findColumn(label));
  }

  @Override
  public short getShort(String label) throws SQLException {
    return getShort(findColumn(label));
  }

  @Override
  public int getInt(String label) throws SQLException {
    return getInt(findColumn(label));
  }

  @Override
  public long getLong(String label) throws SQLException {
    return getLong(findColumn(label));
  }

  @Override
  public float getFloat(String label) throws SQLException {
    return getFloat(findColumn(label));
  }

  @Override
  public double getDouble(String label) throws SQLException {
    return getDouble(findColumn(label));
  }

  @Override
  @Deprecated
  public BigDecimal getBigDecimal(String label, int scale) throws SQLException {
    return getBigDecimal(findColumn(label), scale);
  }

  @Override
  public BigDecimal getBigDecimal(String label) throws SQLException {
    return getBigDecimal(findColumn(label));
  }

  @Override
  public byte[] getBytes(String label) throws SQLException {
    return getBytes(findColumn(label));
  }

  @Override
  public Date getDate(String label) throws SQLException {
    return getDate(findColumn(label));
  }

  @Override
  public Date getDate(String label, Calendar calendar) throws SQLException {
    return getDate(findColumn(label), calendar);
  }

  @Override
  public Time getTime(String label) throws SQLException {
    return getTime(findColumn(label));
  }

  @Override
  public Time getTime(String label, Calendar calendar) throws SQLException {
    return getTime(findColumn(label), calendar);
  }

  @Override
  public Timestamp getTimestamp(String label) throws SQLException {
    return getTimestamp(findColumn(label));
  }

  @Override
  public Timestamp getTimestamp(String label, Calendar calendar) throws SQLException {
    return getTimestamp(findColumn(label), calendar);
  }

  @Override
  public InputStream getAsciiStream(String label) throws SQLException {
    return getAsciiStream(findColumn(label));
  }

  @Override
  @Deprecated
  public InputStream getUnicodeStream(String label) throws SQLException {
    return getUnicodeStream(findColumn(label));
  }

  @Override
  public InputStream getBinaryStream(String label) throws SQLException {
    return getBinaryStream(findColumn(label));
  }

  @Override
  public Reader getCharacterStream(String label) throws SQLException {
    return getCharacterStream(findColumn(label));
  }

  @Override
  public Reader getNCharacterStream(String label) throws SQLException {
    return getNCharacterStream(findColumn(label));
  }

  @Override
  public String getNString(String label) throws SQLException {
    return getNString(findColumn(label));
  }

  @Override
  public Object getObject(String label) throws SQLException {
    return getObject(findColumn(label));
  }

  @Override
  public <T> T getObject(String label, Class<T> type) throws SQLException {
    return getObject(findColumn(label), type);
  }

  @Override
  public Object getObject(String label, Map<String, Class<?>> map) throws SQLException {
    return getObject(findColumn(label), map);
  }

  @Override
  public Array getArray(String label) throws SQLException {
    return getArray(findColumn(label));
  }

  @Override
  public Blob getBlob(String label) throws SQLException {
    return getBlob(findColumn(label));
  }

  @Override
  public Clob getClob(String label) throws SQLException {
    return getClob(findColumn(label));
  }
}
