package io.thallus.spark;

import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.ValueVector;
import org.apache.spark.sql.catalyst.expressions.SpecializedGetters;
import org.apache.spark.sql.execution.arrow.ArrowFieldWriter;
import org.apache.spark.sql.types.Decimal;

/**
 * Writes a Spark decimal of at most 18 digits into Arrow as its unscaled long. Spark's own decimal writer goes
 * through a {@code java.math.BigDecimal} per value, which made TPC-H's four decimal columns most of a write's
 * conversion time. Like Spark's, a value that does not fit the column's precision is written as NULL.
 */
final class CompactDecimalWriter extends ArrowFieldWriter {
  static final int MAX_PRECISION = Decimal.MAX_LONG_DIGITS();

  private final DecimalVector vector;
  private final int precision;
  private final int scale;

  CompactDecimalWriter(DecimalVector vector) {
    this.vector = vector;
    this.precision = vector.getPrecision();
    this.scale = vector.getScale();
    if (precision > MAX_PRECISION) {
      throw new IllegalArgumentException("decimal(" + precision + ") does not fit a long");
    }
  }

  @Override
  public ValueVector valueVector() {
    return vector;
  }

  @Override
  public void setNull() {
    vector.setNull(count());
  }

  @Override
  public void setValue(SpecializedGetters input, int ordinal) {
    Decimal decimal = input.getDecimal(ordinal, precision, scale);
    if (decimal.changePrecision(precision, scale)) {
      vector.setSafe(count(), decimal.toUnscaledLong());
    } else {
      vector.setNull(count());
    }
  }
}
