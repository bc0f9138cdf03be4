package io.thallus.jdbc;

import java.sql.SQLException;
import java.util.Arrays;

/**
 * The values a prepared statement's caller has set, by placeholder index, checked against how many placeholders the
 * SQL has: the server's engine says that (DuckDB's parser), asked through {@code placeholders} only once a value is
 * needed (a statement run without values asks nothing, and the server checks that its SQL needs none).
 */
final class BoundValues {
  private static final Object UNSET = new Object();

  /** Asks the server how many placeholders the SQL has (a round trip). */
  interface PlaceholderCount {
    int ask() throws SQLException;
  }

  private final PlaceholderCount placeholders;
  /** The values set so far, by index - 1 (UNSET where none is): as long as the highest index set. */
  private Object[] values = new Object[0];
  /** The server's count; -1 until asked. */
  private int count = -1;

  BoundValues(PlaceholderCount placeholders) {
    this.placeholders = placeholders;
  }

  /** What the server said when asked otherwise (a description the statement fetched for another reason). */
  void known(int placeholders) {
    count = placeholders;
  }

  private int count() throws SQLException {
    if (count < 0) {
      count = placeholders.ask();
    }
    return count;
  }

  /** Sets the value of placeholder {@code index} (1-based); one beyond the server's count, once known, is refused. */
  void set(int index, Object value) throws SQLException {
    if (index < 1 || (count >= 0 && index > count)) {
      int known = Math.max(count, 0);
      throw Errors.invalid("parameter " + index + " is outside 1.." + known + " (the SQL has " + known + " ?)");
    }
    if (index > values.length) {
      int had = values.length;
      values = Arrays.copyOf(values, index);
      Arrays.fill(values, had, index, UNSET);
    }
    values[index - 1] = value;
  }

  void clear() {
    Arrays.fill(values, UNSET);
  }

  /** One value per placeholder, each set (with none set and the count never asked: none, and the server checks). */
  Object[] complete() throws SQLException {
    int expected = values.length == 0 && count < 0 ? 0 : count();
    for (int i = expected; i < values.length; i++) {
      if (values[i] != UNSET) {
        throw Errors.invalid("parameter " + (i + 1) + " is outside 1.." + expected + " (the SQL has " + expected
            + " ?)");
      }
    }
    Object[] row = new Object[expected];
    for (int i = 0; i < expected; i++) {
      if (i >= values.length || values[i] == UNSET) {
        throw new SQLException("parameter " + (i + 1) + " of " + expected + " is not set", "07001");
      }
      row[i] = values[i];
    }
    return row;
  }
}
