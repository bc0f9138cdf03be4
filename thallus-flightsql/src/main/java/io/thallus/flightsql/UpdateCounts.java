package io.thallus.flightsql;

import io.thallus.ThallusStream;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/** The rows a statement without a result changed, as the native stream reports them. */
final class UpdateCounts {
  private UpdateCounts() {}

  /**
   * Reads {@code stream} to its end (where a failure shows) and answers the rows it changed: the sum of its update
   * count column, or -1 for a stream of rows, which counts nothing.
   */
  static long read(ThallusStream stream) {
    long total = 0;
    boolean counts = stream.isUpdateCount();
    while (stream.hasNext()) {
      try (VectorSchemaRoot batch = stream.next()) {
        if (counts && batch.getFieldVectors().size() == 1 && batch.getVector(0) instanceof BigIntVector vector) {
          for (int row = 0; row < batch.getRowCount(); row++) {
            if (!vector.isNull(row)) {
              total += Math.max(0, vector.get(row));
            }
          }
        }
      }
    }
    return counts ? total : -1;
  }
}
