package io.thallus.spark.shuffle;

import java.util.Arrays;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatchRow;

/**
 * How a map task finds each row's reduce partition. Ids must equal those of Spark's own exchange for the same
 * partitioning, since one side of a join may be Spark's exchange: {@link Murmur3PartitionIds} computes Spark's
 * {@code pmod(murmur3hash(keys, 42), n)} itself for keys that are input columns, and anything else evaluates
 * Spark's expression through its generated projection.
 */
abstract class RowPartitionIds {
  /** The reduce partition of {@code row}. */
  abstract int of(InternalRow row);

  /** The reduce partition of each of the first {@code rows} rows of {@code sources}' columns, into {@code into}. */
  abstract void of(ColumnSource[] sources, int rows, int[] into);

  /** Every row to partition 0 (a single-partition exchange). */
  static RowPartitionIds single() {
    return new RowPartitionIds() {
      @Override
      int of(InternalRow row) {
        return 0;
      }

      @Override
      void of(ColumnSource[] sources, int rows, int[] into) {
        Arrays.fill(into, 0, rows, 0);
      }
    };
  }

  /** Spark's partition id expression, evaluated row by row by its generated projection (initialized by the caller). */
  static RowPartitionIds projected(UnsafeProjection projection) {
    return new RowPartitionIds() {
      @Override
      int of(InternalRow row) {
        return projection.apply(row).getInt(0);
      }

      @Override
      void of(ColumnSource[] sources, int rows, int[] into) {
        ColumnVector[] columns = new ColumnVector[sources.length];
        for (int i = 0; i < columns.length; i++) {
          columns[i] = sources[i].column;
        }
        ColumnarBatchRow row = new ColumnarBatchRow(columns);
        for (int i = 0; i < rows; i++) {
          row.rowId = i;
          into[i] = projection.apply(row).getInt(0);
        }
      }
    };
  }
}
