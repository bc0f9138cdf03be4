package io.thallus.spark.shuffle;

import org.apache.arrow.memory.ArrowBuf;
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
  /**
   * Whether some row may be null: where none is, the scatter sets the rows' validity without reading the source's.
   * Asked once per batch (an Arrow vector counts its nulls over all its values).
   */
  final boolean nulls;
  final long validity;
  final long values;
  final long offsets;

  private ColumnSource(ColumnVector column, Layout layout, int width, boolean nulls, FieldVector vector) {
    this.column = column;
    this.layout = layout;
    this.width = width;
    this.nulls = nulls;
    this.validity = vector == null ? 0 : vector.getValidityBuffer().memoryAddress();
    this.values = vector == null ? 0 : vector.getDataBuffer().memoryAddress();
    this.offsets = layout == Layout.VARIABLE ? vector.getOffsetBuffer().memoryAddress() : 0;
  }

  /**
   * {@code column}, a column of Spark type {@code type} in a batch of {@code rows} rows. An Arrow column read directly
   * has its buffers checked against the rows first ({@link #checkBuffers}), so that no read by address, here or in
   * the copy and hash loops, leaves them.
   *
   * @throws IllegalArgumentException where an Arrow column holds fewer values than the batch has rows, or its buffers
   *     are too small for them, or its offsets go backwards or past its data (a malformed batch from upstream)
   */
  static ColumnSource of(ColumnVector column, DataType type, int rows) {
    ValueVector arrow = switch (column) {
      case ArrowColumnVector vector -> vector.getValueVector();
      case CompactDecimals.Vector vector -> vector.arrow();
      default -> null;
    };
    if (!(arrow instanceof FieldVector vector)) {
      return getters(column);
    }
    if (vector.getValueCount() < rows) {
      throw new IllegalArgumentException("An input column of " + type.sql() + " holds " + vector.getValueCount()
          + " values in a batch of " + rows + " rows");
    }
    Layout layout = layoutOf(type, vector, column instanceof CompactDecimals.Vector);
    if (layout == Layout.GETTERS) {
      return getters(column);
    }
    int width = layout == Layout.FIXED ? ((BaseFixedWidthVector) vector).getTypeWidth() : 0;
    checkBuffers(vector, type, layout, width, rows);
    boolean nulls = column.hasNull();
    return new ColumnSource(column, layout, width, nulls, vector);
  }

  /** Each of {@code columns}, of the Spark types {@code types}, in a batch of {@code rows} rows ({@link #of}). */
  static ColumnSource[] of(ColumnVector[] columns, DataType[] types, int rows) {
    ColumnSource[] sources = new ColumnSource[columns.length];
    for (int i = 0; i < columns.length; i++) {
      sources[i] = of(columns[i], types[i], rows);
    }
    return sources;
  }

  private static ColumnSource getters(ColumnVector column) {
    return new ColumnSource(column, Layout.GETTERS, 0, column.hasNull(), null);
  }

  /**
   * Refuses an Arrow column whose buffers do not hold {@code rows} rows of its layout: Arrow's VectorLoader does not
   * check buffer lengths against the value count, and the scatter reads these buffers by address, with no check per
   * value. Validity bits are needed for every value the vector claims, since Arrow counts its nulls over all of them
   * ({@code hasNull}, which reads by address where Arrow's bounds checks are off); values of {@code width} bytes, or
   * bits, for the rows; and for strings and binaries {@code rows + 1} offsets that start at or after 0, never go
   * backwards and end within the data buffer (one pass over the offsets, once per batch).
   */
  private static void checkBuffers(FieldVector vector, DataType type, Layout layout, int width, int rows) {
    String column = "'" + vector.getName() + "' of " + type.sql();
    needCapacity(vector.getValidityBuffer(), (vector.getValueCount() + 7L) / 8, "validity", column, rows);
    long bitBytes = (rows + 7L) / 8;
    ArrowBuf data = vector.getDataBuffer();
    switch (layout) {
      case FIXED -> needCapacity(data, (long) width * rows, "data", column, rows);
      case BITS -> needCapacity(data, bitBytes, "data", column, rows);
      case VARIABLE -> {
        ArrowBuf offsets = vector.getOffsetBuffer();
        needCapacity(offsets, 4L * (rows + 1), "offset", column, rows);
        long address = offsets.memoryAddress();
        int previous = MemoryUtil.getInt(address);
        if (previous < 0) {
          throw malformed(column, rows, "its first offset is " + previous);
        }
        for (int row = 0; row < rows; row++) {
          int next = MemoryUtil.getInt(address + 4L * (row + 1));
          if (next < previous) {
            throw malformed(column, rows, "its offsets go backwards at row " + row + " (" + previous + " to " + next
                + ")");
          }
          previous = next;
        }
        if (previous > data.capacity()) {
          throw malformed(column, rows, "its last offset " + previous + " is past its " + data.capacity()
              + " data bytes");
        }
      }
      case GETTERS -> throw new IllegalStateException("A column read through its getters has no buffers to check");
    }
  }

  private static void needCapacity(ArrowBuf buffer, long bytes, String name, String column, int rows) {
    if (buffer.capacity() < bytes) {
      throw malformed(column, rows, "its " + name + " buffer holds " + buffer.capacity() + " bytes, not the " + bytes
          + " its rows need");
    }
  }

  private static IllegalArgumentException malformed(String column, int rows, String problem) {
    return new IllegalArgumentException("A malformed Arrow input column " + column + " in a batch of " + rows
        + " rows: " + problem);
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
