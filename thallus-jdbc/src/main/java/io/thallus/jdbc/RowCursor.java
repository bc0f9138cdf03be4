package io.thallus.jdbc;

import java.sql.SQLException;

/**
 * Where a forward-only result set stands in its rows: before the first, on one (counted from 1), or after the last.
 * It moves only forward, one row at a time.
 */
final class RowCursor {
  private final Rows rows;
  private boolean started;
  private boolean after;
  private long rowNumber;

  RowCursor(Rows rows) {
    this.rows = rows;
  }

  /** Moves to the next row; false, and after the last row for good, at the end. */
  boolean next() throws SQLException {
    if (after) {
      return false;
    }
    started = true;
    if (rows.next()) {
      rowNumber++;
      return true;
    }
    after = true;
    return false;
  }

  /** Refuses to read a row when the cursor stands on none. */
  void checkOnRow() throws SQLException {
    if (!started || after) {
      throw new SQLException(after ? "the result set is past its last row" : "call next() before reading a row",
          "24000");
    }
  }

  /** The current row's index within the current batch (see {@link #checkOnRow}). */
  int row() {
    return rows.row();
  }

  boolean isBeforeFirst() {
    return !started;
  }

  boolean isAfterLast() {
    return after && rowNumber > 0;
  }

  boolean isFirst() {
    return started && !after && rowNumber == 1;
  }

  /** The current row's number, from 1; 0 when on no row (JDBC's {@code getRow}). */
  int rowNumber() {
    return after ? 0 : (int) Math.min(Integer.MAX_VALUE, rowNumber);
  }
}
