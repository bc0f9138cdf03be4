package io.thallus.spark;

import org.apache.arrow.vector.DecimalVector;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.sql.vectorized.ColumnarMap;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A received Arrow decimal column of at most 18 digits as Spark reads it: each value's unscaled long is the low
 * 8 bytes of its 16 (Arrow's decimals are little-endian two's complement), handed over as a compact Spark decimal.
 * Spark's {@code ArrowColumnVector} goes through a {@code java.math.BigDecimal} per value, which made the decimal
 * columns of a join's input (TPC-H Q3's lineitem) the largest part of reading it.
 */
final class CompactDecimalColumnVector extends ColumnVector {
  private final DecimalVector vector;

  CompactDecimalColumnVector(DecimalVector vector) {
    super(DataTypes.createDecimalType(vector.getPrecision(), vector.getScale()));
    if (vector.getPrecision() > CompactDecimalWriter.MAX_PRECISION) {
      throw new IllegalArgumentException("decimal(" + vector.getPrecision() + ") does not fit a long");
    }
    this.vector = vector;
  }

  /** Whether {@code vector} is read this way (a decimal of at most 18 digits). */
  static boolean fits(org.apache.arrow.vector.FieldVector vector) {
    return vector instanceof DecimalVector decimal && decimal.getPrecision() <= CompactDecimalWriter.MAX_PRECISION;
  }

  @Override
  public Decimal getDecimal(int rowId, int precision, int scale) {
    if (vector.isNull(rowId)) {
      return null;
    }
    long unscaled = vector.getDataBuffer().getLong((long) rowId * DecimalVector.TYPE_WIDTH);
    return Decimal.createUnsafe(unscaled, vector.getPrecision(), vector.getScale());
  }

  @Override
  public boolean hasNull() {
    return vector.getNullCount() > 0;
  }

  @Override
  public int numNulls() {
    return vector.getNullCount();
  }

  @Override
  public boolean isNullAt(int rowId) {
    return vector.isNull(rowId);
  }

  /** The vector is the batch's: the reader releases it with the batch. */
  @Override
  public void close() {}

  private UnsupportedOperationException notDecimal() {
    return new UnsupportedOperationException("a " + dataType().simpleString() + " column is read as decimals");
  }

  @Override
  public boolean getBoolean(int rowId) {
    throw notDecimal();
  }

  @Override
  public byte getByte(int rowId) {
    throw notDecimal();
  }

  @Override
  public short getShort(int rowId) {
    throw notDecimal();
  }

  @Override
  public int getInt(int rowId) {
    throw notDecimal();
  }

  @Override
  public long getLong(int rowId) {
    throw notDecimal();
  }

  @Override
  public float getFloat(int rowId) {
    throw notDecimal();
  }

  @Override
  public double getDouble(int rowId) {
    throw notDecimal();
  }

  @Override
  public ColumnarArray getArray(int rowId) {
    throw notDecimal();
  }

  @Override
  public ColumnarMap getMap(int rowId) {
    throw notDecimal();
  }

  @Override
  public UTF8String getUTF8String(int rowId) {
    throw notDecimal();
  }

  @Override
  public byte[] getBinary(int rowId) {
    throw notDecimal();
  }

  @Override
  public ColumnVector getChild(int ordinal) {
    throw notDecimal();
  }
}
