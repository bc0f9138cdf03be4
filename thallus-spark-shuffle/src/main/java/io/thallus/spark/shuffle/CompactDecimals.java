package io.thallus.spark.shuffle;

import org.apache.arrow.vector.BigIntVector;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.sql.vectorized.ColumnarMap;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Decimals of at most 18 digits cross the exchange as their unscaled 64-bit values (an Arrow int64 column), as Spark
 * keeps them in its rows: Arrow's decimal128 would make each value a BigDecimal on the way in and on the way out,
 * which costs more than the whole shuffle of the value. The scale and precision travel in the plan.
 */
final class CompactDecimals {
  private CompactDecimals() {}

  static boolean compact(DecimalType type) {
    return type.precision() <= Decimal.MAX_LONG_DIGITS();
  }

  /** Reduce side: the BigIntVector read as Spark decimals of the column's type. */
  static final class Vector extends ColumnVector {
    private final BigIntVector vector;

    Vector(BigIntVector vector, DecimalType type) {
      super(type);
      this.vector = vector;
    }

    /** The Arrow vector of unscaled longs, for the map side's scatter to read directly. */
    BigIntVector arrow() {
      return vector;
    }

    @Override
    public Decimal getDecimal(int rowId, int precision, int scale) {
      return vector.isNull(rowId) ? null : Decimal.createUnsafe(vector.get(rowId), precision, scale);
    }

    @Override
    public boolean isNullAt(int rowId) {
      return vector.isNull(rowId);
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
    public void close() {
      // The vector belongs to the reader's root, which closes it.
    }

    @Override
    public boolean getBoolean(int rowId) {
      throw notThisType();
    }

    @Override
    public byte getByte(int rowId) {
      throw notThisType();
    }

    @Override
    public short getShort(int rowId) {
      throw notThisType();
    }

    @Override
    public int getInt(int rowId) {
      throw notThisType();
    }

    @Override
    public long getLong(int rowId) {
      throw notThisType();
    }

    @Override
    public float getFloat(int rowId) {
      throw notThisType();
    }

    @Override
    public double getDouble(int rowId) {
      throw notThisType();
    }

    @Override
    public ColumnarArray getArray(int rowId) {
      throw notThisType();
    }

    @Override
    public ColumnarMap getMap(int ordinal) {
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

    private UnsupportedOperationException notThisType() {
      return new UnsupportedOperationException("A decimal column is read with getDecimal");
    }
  }
}
