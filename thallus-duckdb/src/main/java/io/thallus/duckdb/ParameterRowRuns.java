package io.thallus.duckdb;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.engine.CancelSignal;
import io.thallus.engine.QuerySpec;
import io.thallus.internal.batch.ValidatingStreamReader;
import io.thallus.internal.protocol.InsertStatements;
import java.io.ByteArrayInputStream;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.duckdb.DuckDBConnection;

/**
 * A statement run once per row of parameters (a request's Arrow IPC rows) on the session's connection, inside the
 * transaction the session holds: an INSERT ... VALUES of only placeholders as one INSERT ... SELECT from the rows
 * (DuckDB scans the Arrow batch in place), any other statement prepared once and executed per row.
 */
final class ParameterRowRuns {
  /** The session's name for rows of parameters while an INSERT reads them. */
  private static final String PARAMETER_ROWS_VIEW = "thallus_parameter_rows";

  private final DuckDBConnection connection;

  ParameterRowRuns(DuckDBConnection connection) {
    this.connection = connection;
  }

  /**
   * Runs the statement once per row of parameters, all rows in one transaction: the session's, or one of its own
   * that commits them together or rolls them all back.
   */
  long[] runInTransaction(QuerySpec spec, BufferAllocator allocator, CancelSignal cancel) throws SQLException {
    boolean ownTransaction = !DuckDBNatives.inTransaction(connection);
    if (ownTransaction) {
      execute("BEGIN TRANSACTION");
    }
    try {
      long[] counts = run(spec, allocator, cancel);
      if (ownTransaction) {
        execute("COMMIT");
      }
      return counts;
    } catch (SQLException | RuntimeException e) {
      if (ownTransaction) {
        try {
          execute("ROLLBACK");
        } catch (SQLException alreadyOver) {
          // A failed COMMIT has rolled back already.
        }
      }
      throw e;
    }
  }

  private void execute(String sql) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      statement.execute(sql);
    }
  }

  /** The update count of each row, in order. */
  long[] run(QuerySpec spec, BufferAllocator allocator, CancelSignal cancel) throws SQLException {
    long[] counts;
    // The client's rows are checked batch by batch before DuckDB or a getter reads them.
    try (ValidatingStreamReader rows = new ValidatingStreamReader(new ByteArrayInputStream(spec.parameterRows()),
        allocator)) {
      int columns = rows.getVectorSchemaRoot().getFieldVectors().size();
      Optional<InsertStatements.Insert> insert = InsertStatements.parse(spec.sql())
          .filter(statement -> statement.placeholders() == columns);
      try {
        if (insert.isPresent()) {
          counts = insertRows(insert.get(), rows, allocator, cancel);
        } else {
          counts = eachRow(spec.sql(), rows, columns, cancel);
        }
      } catch (SQLException e) {
        // DuckDB pulls the rows and reports a refused batch only as text: the refusal says it better.
        if (rows.refusal() != null) {
          throw rows.refusal();
        }
        throw e;
      }
    } catch (java.io.IOException e) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "the rows of parameters are not an Arrow IPC stream: "
          + e.getMessage(), e);
    }
    return counts;
  }

  private long[] insertRows(InsertStatements.Insert target, ArrowStreamReader rows, BufferAllocator allocator,
      CancelSignal cancel) throws SQLException, java.io.IOException {
    long expected = 0;
    try (ArrowArrayStream stream = ArrowArrayStream.allocateNew(allocator)) {
      Data.exportArrayStream(allocator, rows, stream);
      connection.registerArrowStream(PARAMETER_ROWS_VIEW, stream);
      try (Statement insert = connection.createStatement()) {
        String sql = target.selectingFrom(PARAMETER_ROWS_VIEW);
        expected = DuckDBEngine.cancellable(insert, cancel, () -> insert.executeLargeUpdate(sql));
      } finally {
        try (Statement drop = connection.createStatement()) {
          drop.execute("DROP VIEW IF EXISTS " + PARAMETER_ROWS_VIEW);
        }
      }
    }
    // Each row of an INSERT ... VALUES (?, ...) inserts one row: the total is one per row.
    long[] counts = new long[(int) expected];
    java.util.Arrays.fill(counts, 1);
    return counts;
  }

  private long[] eachRow(String sql, ArrowStreamReader rows, int columns, CancelSignal cancel)
      throws SQLException, java.io.IOException {
    List<Long> counts = new ArrayList<>();
    try (PreparedStatement prepared = connection.prepareStatement(sql)) {
      DuckDBEngine.cancellable(prepared, cancel, () -> {
        while (rows.loadNextBatch()) {
          org.apache.arrow.vector.VectorSchemaRoot batch = rows.getVectorSchemaRoot();
          List<Object> values = new ArrayList<>(columns);
          for (int row = 0; row < batch.getRowCount(); row++) {
            if (cancel.isCancelled()) {
              throw ThallusException.of(StatusCode.CANCELLED, "the statement was cancelled");
            }
            values.clear();
            for (org.apache.arrow.vector.FieldVector column : batch.getFieldVectors()) {
              values.add(ParameterValues.at(column, row));
            }
            DuckDBEngine.bind(prepared, values);
            counts.add(prepared.executeLargeUpdate());
          }
        }
        return null;
      });
    }
    return counts.stream().mapToLong(Long::longValue).toArray();
  }
}
