package io.thallus.spark.shuffle;

import java.math.BigInteger;
import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.spark.sql.catalyst.expressions.SpecializedGetters;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.vectorized.ColumnVector;

/** The {@link ColumnWriter}s of fixed-width columns: each value is one put at {@code values + index * width}. */
final class FixedWidthWriters {
  private FixedWidthWriters() {}

  /**
   * Copies {@code width}-byte values from {@code from}'s rows {@code rowIds[first..end)} to consecutive slots at
   * {@code to}: one tight loop per width. Values under a null are copied too (Arrow leaves them undefined, and a
   * branch per value costs more than the copy).
   */
  static void copyValues(long from, int width, int[] rowIds, int first, int end, long to) {
    switch (width) {
      case 1 -> {
        for (int i = first; i < end; i++, to++) {
          MemoryUtil.putByte(to, MemoryUtil.getByte(from + rowIds[i]));
        }
      }
      case 2 -> {
        for (int i = first; i < end; i++, to += 2) {
          MemoryUtil.putShort(to, MemoryUtil.getShort(from + 2L * rowIds[i]));
        }
      }
      case 4 -> {
        for (int i = first; i < end; i++, to += 4) {
          MemoryUtil.putInt(to, MemoryUtil.getInt(from + 4L * rowIds[i]));
        }
      }
      case 8 -> {
        for (int i = first; i < end; i++, to += 8) {
          MemoryUtil.putLong(to, MemoryUtil.getLong(from + 8L * rowIds[i]));
        }
      }
      case 16 -> {
        for (int i = first; i < end; i++, to += 16) {
          long at = from + 16L * rowIds[i];
          MemoryUtil.putLong(to, MemoryUtil.getLong(at));
          MemoryUtil.putLong(to + 8, MemoryUtil.getLong(at + 8));
        }
      }
      default -> throw new IllegalArgumentException("No fixed-width copy of " + width + "-byte values");
    }
  }

  /** A fixed-width column: the value buffer's address, kept current across growth. */
  abstract static class FixedWidth extends ColumnWriter {
    /** Bytes per value in the vector (0 for bits). */
    final int width;
    long values;

    FixedWidth(FieldVector vector, int width) {
      super(vector);
      this.width = width;
    }

    /** An Arrow source of this column's layout is copied buffer to buffer; any other is read by its getters. */
    @Override
    void copy(ColumnSource source, int[] rowIds, int from, int to, int index) {
      if (source.layout != ColumnSource.Layout.FIXED || source.width != width) {
        super.copy(source, rowIds, from, to, index);
        return;
      }
      copyValidity(source, rowIds, from, to, index);
      copyValues(source.values, width, rowIds, from, to, values + (long) width * index);
    }

    @Override
    void addressesChanged() {
      super.addressesChanged();
      values = vector.getDataBuffer().memoryAddress();
    }

    /** Row {@code index} made null after {@link #write} set it valid: a value that does not fit the column. */
    final void clearValid(int index) {
      long address = validity + (index >>> 3);
      MemoryUtil.putByte(address, (byte) (MemoryUtil.getByte(address) & ~(1 << (index & 7))));
    }
  }

  /**
   * {@code column}'s decimal at {@code rowId} as a decimal of {@code precision} and {@code scale}, null where it does
   * not fit them. It is read at the column's own type, since Spark's writable vectors pick how to read a value (an
   * int, a long or bytes) by the precision asked, not by how they hold it.
   */
  static Decimal decimalAt(ColumnVector column, int rowId, int precision, int scale) {
    if (!(column.dataType() instanceof DecimalType own) || own.precision() == precision && own.scale() == scale) {
      return column.getDecimal(rowId, precision, scale);
    }
    Decimal value = column.getDecimal(rowId, own.precision(), own.scale());
    return value.changePrecision(precision, scale) ? value : null;
  }

  static final class Booleans extends FixedWidth {
    Booleans(BitVector vector) {
      super(vector, 0);
    }

    @Override
    void copy(ColumnSource source, int[] rowIds, int from, int to, int index) {
      if (source.layout != ColumnSource.Layout.BITS) {
        super.copy(source, rowIds, from, to, index);
        return;
      }
      copyValidity(source, rowIds, from, to, index);
      for (int i = from; i < to; i++, index++) {
        setBit(source.bit(rowIds[i]), index);
      }
    }

    @Override
    void writeValue(SpecializedGetters row, int ordinal, int index) {
      setBit(row.getBoolean(ordinal), index);
    }

    @Override
    void writeValue(ColumnVector column, int rowId, int index) {
      setBit(column.getBoolean(rowId), index);
    }

    private void setBit(boolean value, int index) {
      if (value) {
        long address = values + (index >>> 3);
        MemoryUtil.putByte(address, (byte) (MemoryUtil.getByte(address) | (1 << (index & 7))));
      }
    }
  }

  static final class Bytes extends FixedWidth {
    Bytes(FieldVector vector) {
      super(vector, 1);
    }

    @Override
    void writeValue(SpecializedGetters row, int ordinal, int index) {
      MemoryUtil.putByte(values + index, row.getByte(ordinal));
    }

    @Override
    void writeValue(ColumnVector column, int rowId, int index) {
      MemoryUtil.putByte(values + index, column.getByte(rowId));
    }
  }

  static final class Shorts extends FixedWidth {
    Shorts(FieldVector vector) {
      super(vector, 2);
    }

    @Override
    void writeValue(SpecializedGetters row, int ordinal, int index) {
      MemoryUtil.putShort(values + 2L * index, row.getShort(ordinal));
    }

    @Override
    void writeValue(ColumnVector column, int rowId, int index) {
      MemoryUtil.putShort(values + 2L * index, column.getShort(rowId));
    }
  }

  /** int and date (days since the epoch). */
  static final class Ints extends FixedWidth {
    Ints(FieldVector vector) {
      super(vector, 4);
    }

    @Override
    void writeValue(SpecializedGetters row, int ordinal, int index) {
      MemoryUtil.putInt(values + 4L * index, row.getInt(ordinal));
    }

    @Override
    void writeValue(ColumnVector column, int rowId, int index) {
      MemoryUtil.putInt(values + 4L * index, column.getInt(rowId));
    }
  }

  /** long and timestamps (microseconds since the epoch, with or without a zone). */
  static final class Longs extends FixedWidth {
    Longs(FieldVector vector) {
      super(vector, 8);
    }

    @Override
    void writeValue(SpecializedGetters row, int ordinal, int index) {
      MemoryUtil.putLong(values + 8L * index, row.getLong(ordinal));
    }

    @Override
    void writeValue(ColumnVector column, int rowId, int index) {
      MemoryUtil.putLong(values + 8L * index, column.getLong(rowId));
    }
  }

  static final class Floats extends FixedWidth {
    Floats(FieldVector vector) {
      super(vector, 4);
    }

    @Override
    void writeValue(SpecializedGetters row, int ordinal, int index) {
      MemoryUtil.putInt(values + 4L * index, Float.floatToRawIntBits(row.getFloat(ordinal)));
    }

    @Override
    void writeValue(ColumnVector column, int rowId, int index) {
      MemoryUtil.putInt(values + 4L * index, Float.floatToRawIntBits(column.getFloat(rowId)));
    }
  }

  static final class Doubles extends FixedWidth {
    Doubles(FieldVector vector) {
      super(vector, 8);
    }

    @Override
    void writeValue(SpecializedGetters row, int ordinal, int index) {
      MemoryUtil.putLong(values + 8L * index, Double.doubleToRawLongBits(row.getDouble(ordinal)));
    }

    @Override
    void writeValue(ColumnVector column, int rowId, int index) {
      MemoryUtil.putLong(values + 8L * index, Double.doubleToRawLongBits(column.getDouble(rowId)));
    }
  }

  /**
   * Decimals of at most 18 digits as their unscaled longs ({@link io.thallus.spark.shuffle.CompactDecimals}). An
   * UnsafeRow keeps such a decimal as that long, read without making a Decimal.
   */
  static final class CompactDecimals extends FixedWidth {
    private final DecimalType type;
    private final int precision;
    private final int scale;

    CompactDecimals(BigIntVector vector, DecimalType type) {
      super(vector, 8);
      this.type = type;
      this.precision = type.precision();
      this.scale = type.scale();
    }

    /**
     * From decimal128 of the same scale: a value of at most 18 digits is its low 8 bytes. From Spark's writable
     * vectors (its Parquet reader's) of this column's type: the unscaled value as their {@code getDecimal} reads it
     * (an int up to 9 digits, a long up to 18), without making a Decimal per value. A writable vector of another
     * decimal type holds its values otherwise and is read through {@link #decimalAt}.
     */
    @Override
    void copy(ColumnSource source, int[] rowIds, int from, int to, int index) {
      if (source.column instanceof WritableColumnVector writable && source.layout == ColumnSource.Layout.GETTERS
          && writable.dataType().equals(type)) {
        copyUnscaled(writable, rowIds, from, to, index);
        return;
      }
      if (source.layout != ColumnSource.Layout.FIXED || source.width != 16) {
        super.copy(source, rowIds, from, to, index);
        return;
      }
      copyValidity(source, rowIds, from, to, index);
      long at = values + 8L * index;
      for (int i = from; i < to; i++, at += 8) {
        MemoryUtil.putLong(at, MemoryUtil.getLong(source.values + 16L * rowIds[i]));
      }
    }

    @Override
    void writeValue(SpecializedGetters row, int ordinal, int index) {
      long unscaled = row instanceof UnsafeRow unsafe
          ? unsafe.getLong(ordinal)
          : row.getDecimal(ordinal, precision, scale).toUnscaledLong();
      MemoryUtil.putLong(values + 8L * index, unscaled);
    }

    @Override
    void writeValue(ColumnVector column, int rowId, int index) {
      Decimal value = decimalAt(column, rowId, precision, scale);
      if (value == null) {
        clearValid(index);
        return;
      }
      MemoryUtil.putLong(values + 8L * index, value.toUnscaledLong());
    }

    private void copyUnscaled(WritableColumnVector column, int[] rowIds, int from, int to, int index) {
      boolean ints = precision <= Decimal.MAX_INT_DIGITS();
      boolean nulls = column.hasNull();
      for (int i = from; i < to; i++, index++) {
        int row = rowIds[i];
        if (nulls && column.isNullAt(row)) {
          continue;
        }
        setValid(index);
        MemoryUtil.putLong(values + 8L * index, ints ? column.getInt(row) : column.getLong(row));
      }
    }
  }

  /**
   * Decimals of more than 18 digits as Arrow's decimal128: the unscaled value in 16 little-endian bytes. As in
   * Spark's ArrowWriter, a value that does not fit the column's precision is written as null.
   */
  static final class WideDecimals extends FixedWidth {
    private final int precision;
    private final int scale;

    WideDecimals(DecimalVector vector, DecimalType type) {
      super(vector, 16);
      this.precision = type.precision();
      this.scale = type.scale();
    }

    @Override
    void writeValue(SpecializedGetters row, int ordinal, int index) {
      put(row.getDecimal(ordinal, precision, scale), index);
    }

    @Override
    void writeValue(ColumnVector column, int rowId, int index) {
      put(decimalAt(column, rowId, precision, scale), index);
    }

    private void put(Decimal decimal, int index) {
      if (decimal == null || !decimal.changePrecision(precision, scale)) {
        clearValid(index);
        return;
      }
      long address = values + 16L * index;
      BigInteger unscaled = decimal.toJavaBigDecimal().unscaledValue();
      if (unscaled.bitLength() < Long.SIZE) {
        long small = unscaled.longValue();
        MemoryUtil.putLong(address, small);
        MemoryUtil.putLong(address + 8, small >> 63);
        return;
      }
      byte[] bigEndian = unscaled.toByteArray();
      byte fill = (byte) (unscaled.signum() < 0 ? -1 : 0);
      for (int i = 0; i < 16; i++) {
        int from = bigEndian.length - 1 - i;
        MemoryUtil.putByte(address + i, from >= 0 ? bigEndian[from] : fill);
      }
    }
  }
}
