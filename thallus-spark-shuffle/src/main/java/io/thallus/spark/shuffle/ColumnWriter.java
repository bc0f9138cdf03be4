package io.thallus.spark.shuffle;

import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.spark.sql.catalyst.expressions.SpecializedGetters;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;
import org.apache.spark.sql.vectorized.ColumnVector;

/**
 * Writes one column of a partition's batch: each value goes into the Arrow vector's buffers with a plain put at its
 * row's address. The batch ({@link PartitionBatch}) checks the row capacity once per row and grows every column by
 * doubling, so a value costs no bounds check and no {@code setSafe}; Spark's generic {@code ArrowWriter} checks and
 * dispatches per value. A null leaves the row's validity bit and value zero (the buffers are zeroed when allocated,
 * grown and reset).
 */
abstract class ColumnWriter {
  final FieldVector vector;
  long validity;

  ColumnWriter(FieldVector vector) {
    this.vector = vector;
  }

  /** A writer for a column of Spark type {@code type} into {@code vector} (made from the exchange's Arrow schema). */
  static ColumnWriter of(DataType type, FieldVector vector) {
    return switch (type) {
      case BooleanType ignored -> new FixedWidthWriters.Booleans((BitVector) vector);
      case ByteType ignored -> new FixedWidthWriters.Bytes(vector);
      case ShortType ignored -> new FixedWidthWriters.Shorts(vector);
      case IntegerType ignored -> new FixedWidthWriters.Ints(vector);
      case DateType ignored -> new FixedWidthWriters.Ints(vector);
      case LongType ignored -> new FixedWidthWriters.Longs(vector);
      case TimestampType ignored -> new FixedWidthWriters.Longs(vector);
      case TimestampNTZType ignored -> new FixedWidthWriters.Longs(vector);
      case FloatType ignored -> new FixedWidthWriters.Floats(vector);
      case DoubleType ignored -> new FixedWidthWriters.Doubles(vector);
      case DecimalType decimal when CompactDecimals.compact(decimal) ->
          new FixedWidthWriters.CompactDecimals((BigIntVector) vector, decimal);
      case DecimalType decimal -> new FixedWidthWriters.WideDecimals((DecimalVector) vector, decimal);
      case StringType ignored -> new VariableWidthWriters.Strings((VarCharVector) vector);
      case BinaryType ignored -> new VariableWidthWriters.Binaries((VarBinaryVector) vector);
      default -> throw new IllegalArgumentException("The Thallus exchange does not carry " + type.sql() + " columns");
    };
  }

  /** Row {@code index} of the batch from {@code row}'s field {@code ordinal}. */
  final void write(SpecializedGetters row, int ordinal, int index) {
    if (!row.isNullAt(ordinal)) {
      setValid(index);
      writeValue(row, ordinal, index);
    } else {
      writeNull(index);
    }
  }

  /** Row {@code index} of the batch from {@code column}'s row {@code rowId}. */
  final void write(ColumnVector column, int rowId, int index) {
    if (!column.isNullAt(rowId)) {
      setValid(index);
      writeValue(column, rowId, index);
    } else {
      writeNull(index);
    }
  }

  /**
   * Rows {@code rowIds[from]} to {@code rowIds[to - 1]} of {@code source} into rows {@code index} onwards of the batch,
   * which has room for them: one column of a scattered input batch ({@link PartitionedBatchBuilder}). This one reads
   * through Spark's getters; the writers override it to read an Arrow source's buffers directly where its layout is
   * theirs.
   */
  void copy(ColumnSource source, int[] rowIds, int from, int to, int index) {
    ColumnVector column = source.column;
    for (int i = from; i < to; i++) {
      write(column, rowIds[i], index++);
    }
  }

  /** The validity bits of the rows an Arrow source's copy takes: every row's set where the source has no nulls. */
  final void copyValidity(ColumnSource source, int[] rowIds, int from, int to, int index) {
    if (!source.nulls) {
      setValid(index, index + to - from);
      return;
    }
    for (int i = from; i < to; i++, index++) {
      if (source.valid(rowIds[i])) {
        setValid(index);
      }
    }
  }

  abstract void writeValue(SpecializedGetters row, int ordinal, int index);

  abstract void writeValue(ColumnVector column, int rowId, int index);

  /** A null at {@code index}: nothing but what the layout needs (a variable-width column repeats its offset). */
  void writeNull(int index) {}

  /** Room for {@code rows} rows: the vector grows by doubling until it holds them. */
  void ensureRows(int rows) {
    while (vector.getValueCapacity() < rows) {
      vector.reAlloc();
    }
    addressesChanged();
  }

  /** Rows the vector holds without growing. */
  int capacity() {
    return vector.getValueCapacity();
  }

  /** Marks the batch's {@code rows} rows written (before it is handed to the store). */
  void finish(int rows) {}

  /** Empties the vector for the partition's next batch, keeping its buffers. */
  void reset() {
    vector.reset();
    addressesChanged();
  }

  /** Re-reads the buffers' addresses after they were (re)allocated. */
  void addressesChanged() {
    validity = vector.getValidityBuffer().memoryAddress();
  }

  /** Sets the validity bits of rows {@code from} to {@code to - 1}: whole bytes at once between the edges. */
  final void setValid(int from, int to) {
    int index = from;
    while (index < to && (index & 7) != 0) {
      setValid(index++);
    }
    long address = validity + (index >>> 3);
    for (; index + 8 <= to; index += 8) {
      MemoryUtil.putByte(address++, (byte) -1);
    }
    while (index < to) {
      setValid(index++);
    }
  }

  final void setValid(int index) {
    long address = validity + (index >>> 3);
    MemoryUtil.putByte(address, (byte) (MemoryUtil.getByte(address) | (1 << (index & 7))));
  }
}
