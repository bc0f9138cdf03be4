package io.thallus.internal.protocol;

import java.sql.Array;
import java.sql.ResultSet;
import java.sql.SQLFeatureNotSupportedException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * A list as one query parameter: the SQL type of its elements, as the engine names it ({@code INTEGER},
 * {@code VARCHAR[]}, {@code DECIMAL(10,2)}), and its elements, each a parameter value in its wire form ({@code null}
 * for SQL NULL, a nested list for a list of lists). It is a {@link java.sql.Array} because that is what a JDBC
 * driver binds a list parameter from (its base type name and its elements), DuckDB's among them.
 *
 * @param elementType the SQL type of the elements: letters, digits, spaces and {@code _ , ( ) [ ] "}, at most
 *     {@link #MAX_TYPE_CHARS} characters
 * @param elements the elements, in order; {@code null} for SQL NULL
 */
public record ListParameter(String elementType, List<Object> elements) implements Array {
  /** The longest element type name taken; a longer one is no SQL type a client means. */
  public static final int MAX_TYPE_CHARS = 256;
  /** Lists in lists at most this deep: the wire reader recurses once per level. */
  public static final int MAX_DEPTH = 16;
  private static final Pattern TYPE = Pattern.compile("[A-Za-z0-9_ ,()\\[\\]\"]+");

  public ListParameter {
    if (elementType == null || elementType.length() > MAX_TYPE_CHARS || !TYPE.matcher(elementType).matches()) {
      throw new IllegalArgumentException("a list parameter's element type must be a SQL type name of at most "
          + MAX_TYPE_CHARS + " letters, digits, spaces or _ , ( ) [ ] \", not "
          + (elementType == null ? "null" : "\"" + elementType + "\""));
    }
    // Elements may be null (SQL NULL): no List.copyOf.
    elements = Collections.unmodifiableList(new ArrayList<>(elements));
    if (depth(elements) > MAX_DEPTH) {
      throw new IllegalArgumentException("a list parameter may nest lists at most " + MAX_DEPTH + " deep");
    }
  }

  /** How deep lists nest in a list of {@code elements}: 1 for a list of values. */
  private static int depth(List<Object> elements) {
    int deepest = 0;
    for (Object element : elements) {
      if (element instanceof ListParameter list) {
        deepest = Math.max(deepest, depth(list.elements()));
      }
    }
    return deepest + 1;
  }

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
    return elements.toArray();
  }

  @Override
  public Object getArray(Map<String, Class<?>> map) {
    return getArray();
  }

  @Override
  public Object getArray(long index, int count) {
    int from = Math.toIntExact(index - 1);
    return elements.subList(from, from + count).toArray();
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
