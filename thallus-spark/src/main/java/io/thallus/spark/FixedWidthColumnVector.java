package io.thallus.spark;

import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.vector.BigIntVector;
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
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.util.ArrowUtils;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.sql.vectorized.ColumnarMap;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A received Arrow column of fixed-width values as Spark reads it: integers, floating point, dates, microsecond
 * timestamps, and decimals of at most 18 digits (the low 8 of their 16 little-endian bytes, handed over as a compact
 * Spark decimal). Values are read at the buffer's address. Spark's {@link ArrowColumnVector} goes through Arrow's
 * checked accessors, and for decimals through a {@code java.math.BigDecimal} per value, which made the decimal
 * columns of a join's input (TPC-H Q3's lineitem) the largest part of reading it. The batch's buffers stay in place
 * while Spark reads it: the reader releases them only when Spark moves to the next batch.
 */
final class FixedWidthColumnVector extends ColumnVector {
  private final FieldVector vector;
  private final long data;
  private final long validity;
  private final boolean hasNulls;
  private final int width;

  private FixedWidthColumnVector(FieldVector vector, DataType type, int width) {
    super(type);
    this.vector = vector;
    this.data = vector.getDataBuffer().memoryAddress();
    this.validity = vector.getValidityBuffer().memoryAddress();
    this.hasNulls = vector.getNullCount() > 0;
    this.width = width;
  }

  /** This column as Spark reads it: fixed-width values directly, anything else through Spark's own vector. */
  static ColumnVector of(FieldVector vector) {
    int width = switch (vector) {
      case TinyIntVector v -> 1;
      case SmallIntVector v -> 2;
      case IntVector v -> 4;
      case DateDayVector v -> 4;
      case Float4Vector v -> 4;
      case BigIntVector v -> 8;
      case Float8Vector v -> 8;
      case TimeStampMicroVector v -> 8;
      case TimeStampMicroTZVector v -> 8;
      case DecimalVector v when v.getPrecision() <= Decimal.MAX_LONG_DIGITS() -> DecimalVector.TYPE_WIDTH;
      default -> 0;
    };
    if (width == 0 || !MemoryUtil.LITTLE_ENDIAN || vector.getValueCount() == 0) {
      return new ArrowColumnVector(vector);
    }
    DataType type = vector instanceof DecimalVector decimal
        ? DataTypes.createDecimalType(decimal.getPrecision(), decimal.getScale())
        : ArrowUtils.fromArrowField(vector.getField());
    return new FixedWidthColumnVector(vector, type, width);
  }

  private long at(int rowId) {
    return data + (long) rowId * width;
  }

  @Override
  public boolean isNullAt(int rowId) {
    return hasNulls && (MemoryUtil.getByte(validity + (rowId >> 3)) >> (rowId & 7) & 1) == 0;
  }

  @Override
  public boolean hasNull() {
    return hasNulls;
  }

  @Override
  public int numNulls() {
    return vector.getNullCount();
  }

  @Override
  public byte getByte(int rowId) {
    return MemoryUtil.getByte(at(rowId));
  }

  @Override
  public short getShort(int rowId) {
    return MemoryUtil.getShort(at(rowId));
  }

  @Override
  public int getInt(int rowId) {
    return MemoryUtil.getInt(at(rowId));
  }

  @Override
  public long getLong(int rowId) {
    return MemoryUtil.getLong(at(rowId));
  }

  @Override
  public float getFloat(int rowId) {
    return Float.intBitsToFloat(MemoryUtil.getInt(at(rowId)));
  }

  @Override
  public double getDouble(int rowId) {
    return Double.longBitsToDouble(MemoryUtil.getLong(at(rowId)));
  }

  @Override
  public Decimal getDecimal(int rowId, int precision, int scale) {
    if (isNullAt(rowId)) {
      return null;
    }
    return Decimal.createUnsafe(MemoryUtil.getLong(at(rowId)), precision, scale);
  }

  /** The vector is the batch's: the reader releases it with the batch. */
  @Override
  public void close() {}

  private UnsupportedOperationException notThisType() {
    return new UnsupportedOperationException("a " + dataType().simpleString() + " column has no such values");
  }

  @Override
  public boolean getBoolean(int rowId) {
    throw notThisType();
  }

  @Override
  public ColumnarArray getArray(int rowId) {
    throw notThisType();
  }

  @Override
  public ColumnarMap getMap(int rowId) {
    throw notThisType();
  }

  @Override
  public UTF8String getUTF8String(int rowId) {
    throw notThisType();
  }

  @Override
  public byte[] getBinary(int rowId) {
    throw notThisType();
  }

  @Override
  public ColumnVector getChild(int ordinal) {
    throw notThisType();
  }
}
