package io.thallus.cli.sidebyside;

import java.util.List;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * An order-sensitive checksum of every value of a result: column position, row order, nulls and values all count,
 * so two readers agree only if they received the same data in the same order.
 */
public final class Checksum {
  private Checksum() {}

  /** {@code checksum} extended by every value of {@code batch}, column by column. */
  public static long update(long checksum, VectorSchemaRoot batch) {
    long result = checksum;
    List<FieldVector> vectors = batch.getFieldVectors();
    int rows = batch.getRowCount();
    for (int c = 0; c < vectors.size(); c++) {
      long weight = 2L * c + 1;
      FieldVector vector = vectors.get(c);
      if (vector instanceof BigIntVector bigints) {
        // The common case in the benchmarks, read directly: hashing 80M values would dominate a verify pass.
        for (int row = 0; row < rows; row++) {
          result = result * 31 + (bigints.isNull(row) ? 7 : bigints.get(row) * weight);
        }
      } else {
        // Arrow's value hash reads the value's bytes (strings too) with a fixed seed: equal values, equal hashes.
        for (int row = 0; row < rows; row++) {
          result = result * 31 + (vector.isNull(row) ? 7 : vector.hashCode(row) * weight);
        }
      }
    }
    return result;
  }
}
