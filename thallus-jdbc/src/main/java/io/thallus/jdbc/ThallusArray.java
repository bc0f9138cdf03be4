package io.thallus.jdbc;

import java.sql.Array;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;

/** A LIST or ARRAY value: its elements as {@code getObject} gives them, in an {@code Object[]}. */
final class ThallusArray implements Array {
  private final Object[] elements;
  private final String baseTypeName;
  private final int baseType;

  ThallusArray(List<?> natural) {
    this.elements = new Object[natural.size()];
    Object first = null;
    for (int i = 0; i < elements.length; i++) {
      elements[i] = Values.toJdbc(natural.get(i));
      if (first == null) {
        first = elements[i];
      }
    }
    if (natural instanceof ColumnReader.ListValue list) {
      // A list read from a result: its element type is the column's, whatever its values are (nested lists too).
      JdbcTypes element = JdbcTypes.of(list.element);
      this.baseType = element.sqlType();
      this.baseTypeName = element.typeName();
    } else {
      this.baseType = first == null ? java.sql.Types.NULL : MetaResults.sqlTypeOf(first);
      this.baseTypeName = first == null ? "NULL" : MetaResults.typeNameOf(first);
    }
  }

  @Override
  public String getBaseTypeName() {
    return baseTypeName;
  }

  @Override
  public int getBaseType() {
    return baseType;
  }

  @Override
  public Object getArray() {
    return elements.clone();
  }

  @Override
  public Object getArray(Map<String, Class<?>> map) throws SQLException {
    throw Errors.unsupported("custom type maps", "values map to their standard Java types");
  }

  @Override
  public Object getArray(long index, int count) throws SQLException {
    if (index < 1 || count < 0 || index - 1 + count > elements.length) {
      throw Errors.invalid("elements " + index + ".." + (index - 1 + count) + " are outside 1.." + elements.length);
    }
    Object[] slice = new Object[count];
    System.arraycopy(elements, (int) index - 1, slice, 0, count);
    return slice;
  }

  @Override
  public Object getArray(long index, int count, Map<String, Class<?>> map) throws SQLException {
    throw Errors.unsupported("custom type maps", "values map to their standard Java types");
  }

  @Override
  public ResultSet getResultSet() throws SQLException {
    return getResultSet(1, elements.length);
  }

  @Override
  public ResultSet getResultSet(Map<String, Class<?>> map) throws SQLException {
    throw Errors.unsupported("custom type maps", "values map to their standard Java types");
  }

  @Override
  public ResultSet getResultSet(long index, int count) throws SQLException {
    Object[] slice = (Object[]) getArray(index, count);
    Object[][] rows = new Object[slice.length][];
    for (int i = 0; i < slice.length; i++) {
      rows[i] = new Object[] {index + i, slice[i]};
    }
    return MetaResults.of(List.of("INDEX", "VALUE"), rows);
  }

  @Override
  public ResultSet getResultSet(long index, int count, Map<String, Class<?>> map) throws SQLException {
    throw Errors.unsupported("custom type maps", "values map to their standard Java types");
  }

  @Override
  public void free() {}

  @Override
  public String toString() {
    return java.util.Arrays.deepToString(elements);
  }
}
