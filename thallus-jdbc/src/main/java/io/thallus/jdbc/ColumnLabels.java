package io.thallus.jdbc;

import java.sql.SQLException;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A result's columns by label, as JDBC's {@code findColumn} asks: the first column of a name wins, a label in its
 * exact case first, then in any case. The lookup is built at the first use, as most callers read by index.
 */
final class ColumnLabels {
  private final List<ColumnReader> readers;
  private Map<String, Integer> columnsByLabel;

  ColumnLabels(List<ColumnReader> readers) {
    this.readers = readers;
  }

  /** The column (from 1) of {@code label}; a SQLException naming the columns when there is none. */
  int find(String label) throws SQLException {
    if (columnsByLabel == null) {
      Map<String, Integer> byLabel = new HashMap<>();
      for (int i = readers.size() - 1; i >= 0; i--) {
        // The first column of a name wins, as JDBC asks; exact case first, then any case.
        byLabel.put(readers.get(i).field.getName().toLowerCase(Locale.ROOT), i + 1);
      }
      for (int i = readers.size() - 1; i >= 0; i--) {
        byLabel.put("\u0000" + readers.get(i).field.getName(), i + 1);
      }
      columnsByLabel = byLabel;
    }
    Integer exact = columnsByLabel.get("\u0000" + label);
    if (exact != null) {
      return exact;
    }
    Integer anyCase = label == null ? null : columnsByLabel.get(label.toLowerCase(Locale.ROOT));
    if (anyCase == null) {
      throw Errors.badColumn("no column named '" + label + "'; the columns are "
          + readers.stream().map(r -> r.field.getName()).toList());
    }
    return anyCase;
  }
}
