package io.thallus.spark;

import java.math.BigInteger;
import org.apache.spark.sql.types.DecimalType;

/**
 * Decimal division as Spark does it, in DuckDB SQL. Spark divides exactly and rounds half up (away from zero) to the
 * result's scale; DuckDB's decimal division gives a DOUBLE. So the quotient is computed from the unscaled values as
 * 128-bit integers: {@code round(a * 10^k / b)} with {@code k} chosen so the quotient has the result's scale, then
 * scaled back into the result's type. A value beyond 128 bits fails in DuckDB (an error, never a wrong value).
 *
 * <p>Spark rounds a quotient first to 38 places and then to the result's scale; this rounds once. The two differ
 * only when the digits between the result's scale and the 38th place are a 4 followed by nines only.
 */
final class PlanDecimals {
  private PlanDecimals() {}

  /** {@code left / right} in {@code result}'s type; the caller has dealt with a zero divisor. */
  static String quotient(String left, DecimalType leftType, String right, DecimalType rightType, DecimalType result) {
    int k = result.scale() - leftType.scale() + rightType.scale();
    String numerator = unscaled(left, leftType.scale());
    String denominator = unscaled(right, rightType.scale());
    if (k > 0) {
      numerator = "(" + numerator + " * " + power(k) + ")";
    } else if (k < 0) {
      denominator = "(" + denominator + " * " + power(-k) + ")";
    }
    return scaled(rounded(numerator, denominator), result);
  }

  /**
   * AVG of a decimal as Spark computes it: the exact sum divided by the count, rounded half up to the result's scale,
   * NULL for no rows. {@code sum} is DuckDB's exact SUM (scale {@code scale}), {@code count} its COUNT.
   */
  static String average(String sum, int scale, String count, DecimalType result) {
    String numerator = unscaled(sum, scale);
    int k = result.scale() - scale;
    if (k > 0) {
      numerator = "(" + numerator + " * " + power(k) + ")";
    }
    String denominator = "CAST(" + count + " AS HUGEINT)";
    if (k < 0) {
      denominator = "(" + denominator + " * " + power(-k) + ")";
    }
    return "(CASE WHEN " + count + " = 0 THEN " + PlanExpressions.cast("NULL", result) + " ELSE "
        + scaled(rounded(numerator, denominator), result) + " END)";
  }

  /** A decimal's unscaled value as a HUGEINT (exact: the product has no fractional digits). */
  private static String unscaled(String decimal, int scale) {
    if (scale >= 38) {
      throw new PlanRefused("a decimal of scale " + scale + ": its unscaled value does not fit DuckDB's DECIMAL(38)");
    }
    if (scale == 0) {
      return "CAST(" + decimal + " AS HUGEINT)";
    }
    return "CAST(" + decimal + " * CAST('" + BigInteger.TEN.pow(scale) + "' AS DECIMAL(" + (scale + 1) + ",0))"
        + " AS HUGEINT)";
  }

  private static String power(int exponent) {
    return "CAST('" + BigInteger.TEN.pow(exponent) + "' AS HUGEINT)";
  }

  /**
   * {@code n / d} rounded half away from zero, in integers: the quotient, plus one where twice the remainder reaches
   * the divisor (doubling the remainder, not {@code n}, so any {@code n} that fits in 128 bits does).
   */
  private static String rounded(String n, String d) {
    return "(CASE WHEN (" + n + " < 0) <> (" + d + " < 0) THEN -1 ELSE 1 END * (abs(" + n + ") // abs(" + d
        + ") + CASE WHEN 2 * (abs(" + n + ") % abs(" + d + ")) >= abs(" + d + ") THEN 1 ELSE 0 END))";
  }

  /** An unscaled HUGEINT back into {@code type}. */
  private static String scaled(String unscaled, DecimalType type) {
    if (type.scale() == 0) {
      return "CAST(" + unscaled + " AS DECIMAL(" + type.precision() + ",0))";
    }
    String unit = "0." + "0".repeat(type.scale() - 1) + "1";
    return "CAST(CAST(" + unscaled + " AS DECIMAL(38,0)) * CAST('" + unit + "' AS DECIMAL(" + type.scale() + ","
        + type.scale() + ")) AS DECIMAL(" + type.precision() + "," + type.scale() + "))";
  }
}
