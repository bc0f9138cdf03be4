package io.thallus.jdbc;

import io.thallus.ThallusException;
import io.thallus.ThallusStream;
import java.io.IOException;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * Rows of a Thallus stream. The stream loads each batch into one reused root (Arrow's ArrowReader mode), so the
 * column readers are built once and a batch's buffers go back to the transport as soon as the next one loads.
 */
final class StreamRows implements Rows {
  private final ThallusStream stream;
  private final VectorSchemaRoot root;
  private final List<ColumnReader> readers;
  private final long maxRows;
  private long returned;
  private int row = -1;
  private int batchRows;
  private boolean done;

  /** {@code maxRows} 0 means all rows. */
  StreamRows(ThallusStream stream, long maxRows) throws SQLException {
    this.stream = stream;
    this.maxRows = maxRows;
    try {
      this.root = stream.getVectorSchemaRoot();
    } catch (IOException | ThallusException e) {
      throw new SQLException("cannot read the result's schema: " + e.getMessage(), "XX000", e);
    }
    List<ColumnReader> built = new ArrayList<>();
    for (FieldVector vector : root.getFieldVectors()) {
      built.add(ColumnReader.of(vector, stream));
    }
    this.readers = List.copyOf(built);
  }

  @Override
  public List<ColumnReader> readers() {
    return readers;
  }

  @Override
  public boolean next() throws SQLException {
    if (done) {
      return false;
    }
    if (maxRows > 0 && returned >= maxRows) {
      finish();
      return false;
    }
    row++;
    while (row >= batchRows) {
      try {
        if (!stream.loadNextBatch()) {
          finish();
          return false;
        }
      } catch (ThallusException e) {
        done = true;
        throw Errors.from(e);
      } catch (IOException e) {
        done = true;
        throw new SQLException("reading the next batch: " + e.getMessage(), "08S01", e);
      }
      batchRows = root.getRowCount();
      row = 0;
    }
    returned++;
    return true;
  }

  /** Frees the last batch at once rather than when the result set is closed. */
  private void finish() {
    done = true;
    batchRows = 0;
    row = -1;
    stream.close();
  }

  @Override
  public int row() {
    return row;
  }

  @Override
  public void cancel() {
    stream.cancel();
  }

  @Override
  public void close() throws SQLException {
    done = true;
    try {
      stream.close();
    } catch (ThallusException e) {
      throw Errors.from(e);
    }
  }
}
