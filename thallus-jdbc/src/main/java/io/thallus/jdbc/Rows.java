package io.thallus.jdbc;

import java.sql.SQLException;
import java.util.List;

/** Where a result set's rows come from: a Thallus stream, or rows the driver built itself (metadata). */
interface Rows extends AutoCloseable {
  /** One reader per column, fixed for the whole result. */
  List<ColumnReader> readers();

  /** Moves to the next row; false at the end. */
  boolean next() throws SQLException;

  /** The current row's index within the readers' current batch. */
  int row();

  /** Stops a running query (from any thread); the reader then sees the cancellation. */
  void cancel();

  @Override
  void close() throws SQLException;
}
