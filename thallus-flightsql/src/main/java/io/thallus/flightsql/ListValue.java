package io.thallus.flightsql;

import java.sql.Array;
import java.sql.ResultSet;
import java.sql.SQLFeatureNotSupportedException;
import java.util.Map;

/**
 * A bound list parameter as a Thallus query request takes one: a {@link java.sql.Array} whose base type name is its
 * elements' SQL type and whose elements are parameter values ({@code null} for NULL, a ListValue for a nested list).
 *
 * @param elementType the SQL type of the elements (see {@link ParameterTypes#sqlType})
 * @param elements the elements, in order
 */
record ListValue(String elementType, Object[] elements) implements Array {
  @Override
  public String getBaseTypeName() {
    return elementType;
  }

  @Override
  public int getBaseType() {
    return java.sql.Types.OTHER;
  }

  @Override
  public Object getArray() {
    return elements.clone();
  }

  @Override
  public Object getArray(Map<String, Class<?>> map) {
    return getArray();
  }

  @Override
  public Object getArray(long index, int count) {
    return java.util.Arrays.copyOfRange(elements, Math.toIntExact(index - 1), Math.toIntExact(index - 1 + count));
  }

  @Override
  public Object getArray(long index, int count, Map<String, Class<?>> map) {
    return getArray(index, count);
  }

  @Override
  public ResultSet getResultSet() throws SQLFeatureNotSupportedException {
    throw new SQLFeatureNotSupportedException("a list parameter is read with getArray");
  }

  @Override
  public ResultSet getResultSet(Map<String, Class<?>> map) throws SQLFeatureNotSupportedException {
    return getResultSet();
  }

  @Override
  public ResultSet getResultSet(long index, int count) throws SQLFeatureNotSupportedException {
    return getResultSet();
  }

  @Override
  public ResultSet getResultSet(long index, int count, Map<String, Class<?>> map)
      throws SQLFeatureNotSupportedException {
    return getResultSet();
  }

  @Override
  public void free() {
    // Nothing is held outside the heap.
  }
}
