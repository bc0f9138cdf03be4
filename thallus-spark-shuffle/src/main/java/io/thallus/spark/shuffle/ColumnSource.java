package io.thallus.spark.shuffle;

import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.TimeStampMicroVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.ValueVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
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
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;

/**
 * One column of an input batch as the map side's scatter reads it: straight from its Arrow buffers where the column
 * is an Arrow vector holding the values as the exchange's own batches hold them (what Arrow scans, Spark's
 * ArrowWriter and the exchange's reduce side give), else through Spark's typed getters ({@link #GETTERS}), as for
 * Spark's on- and off-heap vectors of its Parquet reader.
 *
 * <p>Arrow layouts read directly, by the column's Spark type: booleans as bits ({@link Layout#BITS}); bytes, shorts,
 * ints, dates, longs, timestamps (microseconds, with or without a zone), floats and doubles as their little-endian
 * values ({@link Layout#FIXED}, {@link #width} bytes each); decimals as 16-byte decimal128 of the column's scale, and
 * decimals of at most 18 digits also as the exchange's own unscaled longs ({@link CompactDecimals.Vector}); strings and
 * binaries as 32-bit offsets and data ({@link Layout#VARIABLE}). Anything else (large strings, other units) is read
 * through the getters.
 */
final class ColumnSource {
  /** How the column is read. */
  enum Layout {
    /** Spark's typed getters, one call per value. */
    GETTERS,
    /** Arrow fixed-width values of {@link #width} bytes at {@link #values}. */
    FIXED,
    /** Arrow bits at {@link #values}. */
    BITS,
    /** Arrow 32-bit end offsets at {@link #offsets} into the bytes at {@link #values}. */
    VARIABLE
  }

  final ColumnVector column;
  final Layout layout;
  final int width;
  /** Whether some row may be null: where none is, the scatter sets the rows' validity without reading the source's. */
  final boolean nulls;
  final long validity;
  final long values;
  final long offsets;

  private ColumnSource(ColumnVector column, Layout layout, int width, FieldVector vector) {
    this.column = column;
    this.layout = layout;
    this.width = width;
    this.nulls = column.hasNull();
    this.validity = vector == null ? 0 : vector.getValidityBuffer().memoryAddress();
    this.values = vector == null ? 0 : vector.getDataBuffer().memoryAddress();
    this.offsets = layout == Layout.VARIABLE ? vector.getOffsetBuffer().memoryAddress() : 0;
  }

  /**
   * {@code column}, a column of Spark type {@code type} in a batch of {@code rows} rows.
   *
   * @throws IllegalArgumentException where an Arrow column holds fewer values than the batch has rows (its buffers
   *     would be read past their end)
   */
  static ColumnSource of(ColumnVector column, DataType type, int rows) {
    ValueVector arrow = switch (column) {
      case ArrowColumnVector vector -> vector.getValueVector();
      case CompactDecimals.Vector vector -> vector.arrow();
      default -> null;
    };
    if (!(arrow instanceof FieldVector vector)) {
      return new ColumnSource(column, Layout.GETTERS, 0, null);
    }
    if (vector.getValueCount() < rows) {
      throw new IllegalArgumentException("An input column of " + type.sql() + " holds " + vector.getValueCount()
          + " values in a batch of " + rows + " rows");
    }
    Layout layout = layoutOf(type, vector, column instanceof CompactDecimals.Vector);
    if (layout == Layout.GETTERS) {
      return new ColumnSource(column, Layout.GETTERS, 0, null);
    }
    int width = layout == Layout.FIXED ? ((BaseFixedWidthVector) vector).getTypeWidth() : 0;
    return new ColumnSource(column, layout, width, vector);
  }

  private static Layout layoutOf(DataType type, FieldVector vector, boolean compactDecimals) {
    boolean same = switch (type) {
      case BooleanType ignored -> vector instanceof BitVector;
      case ByteType ignored -> vector instanceof TinyIntVector;
      case ShortType ignored -> vector instanceof SmallIntVector;
      case IntegerType ignored -> vector instanceof IntVector;
      case DateType ignored -> vector instanceof DateDayVector;
      case LongType ignored -> vector instanceof BigIntVector && !compactDecimals;
      case TimestampType ignored -> vector instanceof TimeStampMicroTZVector;
      case TimestampNTZType ignored -> vector instanceof TimeStampMicroVector;
      case FloatType ignored -> vector instanceof Float4Vector;
      case DoubleType ignored -> vector instanceof Float8Vector;
      // Unscaled values of the column's scale that fit its precision: decimal128, or the exchange's own longs.
      case DecimalType decimal -> vector instanceof DecimalVector d
          ? d.getScale() == decimal.scale() && d.getPrecision() <= decimal.precision()
          : compactDecimals && vector instanceof BigIntVector && CompactDecimals.compact(decimal);
      case StringType ignored -> vector instanceof VarCharVector;
      case BinaryType ignored -> vector instanceof VarBinaryVector;
      default -> false;
    };
    if (!same) {
      return Layout.GETTERS;
    }
    return switch (vector) {
      case BitVector ignored -> Layout.BITS;
      case VarCharVector ignored -> Layout.VARIABLE;
      case VarBinaryVector ignored -> Layout.VARIABLE;
      default -> Layout.FIXED;
    };
  }

  /** Whether row {@code rowId} holds a value (an Arrow source's validity bit). */
  boolean valid(int rowId) {
    return (MemoryUtil.getByte(validity + (rowId >>> 3)) & (1 << (rowId & 7))) != 0;
  }

  /** Row {@code rowId}'s bit of a {@link Layout#BITS} source. */
  boolean bit(int rowId) {
    return (MemoryUtil.getByte(values + (rowId >>> 3)) & (1 << (rowId & 7))) != 0;
  }
}
