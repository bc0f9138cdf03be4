package io.thallus;

import java.sql.Array;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * A SQL list as one query parameter: the SQL type of its elements, as the engine names it ({@code INTEGER},
 * {@code VARCHAR[]}, {@code DECIMAL(10,2)}), and its elements in order. Pass one among
 * {@link QueryRequest.Builder#parameters(List)}; the JDBC driver's {@code Connection.createArrayOf(type, elements)}
 * makes one, and the Flight SQL port makes one of each Arrow list a client binds.
 *
 * <p>It is a {@link java.sql.Array} because that is what a JDBC driver binds a list from (its base type name and its
 * elements), DuckDB's among them; any other {@code java.sql.Array} given as a parameter is read into one.
 *
 * <pre>{@code
 * client.query(QueryRequest.builder("SELECT list_sum(?)")
 *     .parameters(new ListParameter("INTEGER", List.of(1, 2, 3))).build());
 * }</pre>
 *
 * @param elementType the SQL type of the elements: letters, digits, spaces and {@code _ , ( ) [ ] "}, at most
 *     {@link #MAX_TYPE_CHARS} characters
 * @param elements the elements, in order, each a value a parameter may be ({@code null} for SQL NULL, a
 *     ListParameter for a list of lists); copied, so later changes to the caller's list do not reach it
 */
public record ListParameter(String elementType, List<Object> elements) implements Array {
  /** The longest element type name taken; a longer one is no SQL type a client means. */
  public static final int MAX_TYPE_CHARS = 256;
  /** Lists in lists at most this deep: the wire reader recurses once per level. */
  public static final int MAX_DEPTH = 16;
  private static final Pattern TYPE = Pattern.compile("[A-Za-z0-9_ ,()\\[\\]\"]+");

  /** Checks the element type's characters and the nesting depth, and copies the elements. */
  public ListParameter {
    if (elementType == null || elementType.length() > MAX_TYPE_CHARS || !TYPE.matcher(elementType).matches()) {
      throw new IllegalArgumentException("a list parameter's element type must be a SQL type name of at most "
          + MAX_TYPE_CHARS + " letters, digits, spaces or _ , ( ) [ ] \", not "
          + (elementType == null ? "null" : "\"" + elementType + "\""));
    }
    if (elements == null) {
      throw new IllegalArgumentException("a list parameter's elements must be a list (empty for an empty SQL list), "
          + "not null");
    }
    // Elements may be null (SQL NULL): no List.copyOf.
    elements = Collections.unmodifiableList(new ArrayList<>(elements));
    if (depth(elements) > MAX_DEPTH) {
      throw new IllegalArgumentException("a list parameter may nest lists at most " + MAX_DEPTH + " deep");
    }
  }

  /**
   * The list a JDBC array holds: its base type name as the element type, its elements (an {@code Object[]}) in
   * order, any that are arrays themselves read the same way. A ListParameter is returned as it is.
   *
   * @throws IllegalArgumentException if the array cannot be read, holds no {@code Object[]}, or is no list
   *     parameter (see the constructor)
   */
  public static ListParameter of(Array array) {
    return of(array, 1);
  }

  private static ListParameter of(Array array, int depth) {
    if (array instanceof ListParameter list) {
      return list;
    }
    if (depth > MAX_DEPTH) {
      throw new IllegalArgumentException("a list parameter may nest lists at most " + MAX_DEPTH + " deep");
    }
    try {
      Object held = array.getArray();
      if (!(held instanceof Object[] objects)) {
        throw new IllegalArgumentException("a java.sql.Array parameter must give its elements as an Object[], not "
            + (held == null ? "null" : held.getClass().getName()));
      }
      List<Object> elements = new ArrayList<>(objects.length);
      for (Object element : objects) {
        elements.add(element instanceof Array inner ? of(inner, depth + 1) : element);
      }
      return new ListParameter(array.getBaseTypeName(), elements);
    } catch (SQLException e) {
      throw new IllegalArgumentException("cannot read a java.sql.Array parameter: " + e.getMessage(), e);
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
