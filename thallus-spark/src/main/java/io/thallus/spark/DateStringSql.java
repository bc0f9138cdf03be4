package io.thallus.spark;

import java.util.function.Function;
import org.apache.spark.sql.connector.expressions.Expression;
import org.apache.spark.sql.connector.expressions.Extract;
import org.apache.spark.sql.connector.expressions.GeneralScalarExpression;
import org.apache.spark.sql.connector.expressions.Literal;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.IntegerType;

/**
 * Spark's date and string functions that DuckDB computes with Spark's meaning, as DuckDB SQL; {@code null} for any
 * other (which then stays in Spark):
 * <ul>
 *   <li>{@code year}, {@code month}, {@code quarter}, {@code dayofmonth}, {@code dayofyear} of a DATE (Spark's
 *       {@code Extract}): both count the proleptic Gregorian calendar the same way, and the result is cast to
 *       Spark's INT (DuckDB's is BIGINT). Of a timestamp Spark first casts to a date: pushed for a timestamp
 *       without time zone (the wall clock's date in both), not for one with (Spark's session time zone);</li>
 *   <li>{@code hour}, {@code minute}, {@code second} of a timestamp without time zone (whole seconds in both);</li>
 *   <li>{@code substring(s, pos[, len])} of a string with a literal {@code pos} of at least 1 and a literal
 *       {@code len} of at least 0: both count code points from 1. Spark reads a {@code pos} of 0 as 1 and a negative
 *       one past the start differently from DuckDB, and a column as position could be either: those stay in
 *       Spark.</li>
 *   <li>{@code trim}, {@code ltrim}, {@code rtrim} of a string, of spaces or of literal characters;</li>
 *   <li>{@code trunc(date, format)} to a year, quarter, month or week (a DATE in both);</li>
 *   <li>{@code datediff(end, start)} of dates: the days between, as Spark's INT;</li>
 *   <li>ISO week fields of a date: Spark sends {@code dayofweek} as {@code (DAY_OF_WEEK % 7) + 1} and
 *       {@code weekday} as {@code DAY_OF_WEEK - 1} over the ISO day of the week (Monday 1 to Sunday 7, DuckDB's
 *       {@code isodow}), {@code weekofyear} as the ISO week (DuckDB's {@code week}) and the ISO week-based year as
 *       {@code isoyear};</li>
 *   <li>{@code date_add(date, n)} for a literal {@code n} of at most 3,000,000 days either way (any date of Spark's
 *       years 1 to 9999 moved so far stays inside both ranges, with no integer overflow in Spark); a column of days
 *       stays in Spark, whose overflow differs from DuckDB's range error. {@code date_sub} is not offered to a
 *       connector by Spark 4.2;</li>
 *   <li>{@code length}/{@code char_length} of a string (code points in both, as Spark's INT) and {@code concat} of
 *       strings (DuckDB's {@code ||}, NULL if any part is NULL, as in Spark).</li>
 * </ul>
 * {@code upper} and {@code lower} are not pushed: Spark maps case with full Unicode rules ({@code 'ß'} to
 * {@code 'SS'}, a final sigma), DuckDB code point by code point. Spark offers no general {@code LIKE} to a
 * connector (only the prefix, suffix and contains forms {@link ExpressionSql} already pushes).
 */
final class DateStringSql {
  private DateStringSql() {}

  /** {@code expression} as DuckDB SQL with Spark's type, its operands translated by {@code operand}; or null. */
  static ExpressionSql.Typed translate(Expression expression, Function<Expression, ExpressionSql.Typed> operand) {
    if (expression instanceof Extract extract) {
      String function = switch (extract.field()) {
        case "YEAR" -> "year";
        case "MONTH" -> "month";
        case "QUARTER" -> "quarter";
        case "DAY" -> "day";
        case "DAY_OF_YEAR" -> "dayofyear";
        case "DAY_OF_WEEK" -> "isodow";
        case "WEEK" -> "week";
        case "YEAR_OF_WEEK" -> "isoyear";
        case "HOUR" -> "hour";
        case "MINUTE" -> "minute";
        case "SECOND" -> "second";
        default -> null;
      };
      if (function == null) {
        return null;
      }
      ExpressionSql.Typed source = operand.apply(extract.source());
      boolean ofTime = function.equals("hour") || function.equals("minute") || function.equals("second");
      // Time fields of a wall-clock timestamp (whole seconds in both); date fields of a date.
      if (!source.type().equals(ofTime ? DataTypes.TimestampNTZType : DataTypes.DateType)) {
        return null;
      }
      return new ExpressionSql.Typed("CAST(" + function + "(" + source.sql() + ") AS INTEGER)",
          DataTypes.IntegerType);
    }
    if (expression instanceof GeneralScalarExpression scalar && scalar.name().equals("SUBSTRING")) {
      Expression[] children = scalar.children();
      if (children.length < 2 || children.length > 3) {
        return null;
      }
      ExpressionSql.Typed text = operand.apply(children[0]);
      Integer position = integerLiteral(children[1]);
      Integer length = children.length == 3 ? integerLiteral(children[2]) : Integer.valueOf(Integer.MAX_VALUE);
      if (!text.type().equals(DataTypes.StringType) || position == null || position < 1 || length == null
          || length < 0) {
        return null;
      }
      return new ExpressionSql.Typed("substring(" + text.sql() + ", " + position + ", " + length + ")",
          DataTypes.StringType);
    }
    if (expression instanceof GeneralScalarExpression scalar && scalar.name().equals("TRUNC")
        && scalar.children().length == 2) {
      ExpressionSql.Typed date = operand.apply(scalar.children()[0]);
      String format = stringLiteral(scalar.children()[1]);
      String unit = format == null ? null : TRUNC_UNITS.get(format.toUpperCase(java.util.Locale.ROOT));
      if (!date.type().equals(DataTypes.DateType) || unit == null) {
        return null;
      }
      return new ExpressionSql.Typed("CAST(date_trunc('" + unit + "', " + date.sql() + ") AS DATE)",
          DataTypes.DateType);
    }
    if (expression instanceof GeneralScalarExpression scalar && scalar.name().equals("DATE_DIFF")
        && scalar.children().length == 2) {
      ExpressionSql.Typed end = operand.apply(scalar.children()[0]);
      ExpressionSql.Typed start = operand.apply(scalar.children()[1]);
      if (!end.type().equals(DataTypes.DateType) || !start.type().equals(DataTypes.DateType)) {
        return null;
      }
      // DuckDB's difference of dates is a BIGINT of days, Spark's an INT (dates of Spark's range are at most
      // about 215 million days apart, so the cast never fails).
      return new ExpressionSql.Typed("CAST((" + end.sql() + " - " + start.sql() + ") AS INTEGER)",
          DataTypes.IntegerType);
    }
    if (expression instanceof GeneralScalarExpression scalar && scalar.name().equals("DATE_ADD")
        && scalar.children().length == 2) {
      ExpressionSql.Typed date = operand.apply(scalar.children()[0]);
      Integer days = integerLiteral(scalar.children()[1]);
      if (!date.type().equals(DataTypes.DateType) || days == null || Math.abs((long) days) > MAX_DAYS_ADDED) {
        return null;
      }
      return new ExpressionSql.Typed("(" + date.sql() + " + " + days + ")", DataTypes.DateType);
    }
    if (expression instanceof GeneralScalarExpression scalar && scalar.name().equals("CHAR_LENGTH")
        && scalar.children().length == 1) {
      ExpressionSql.Typed text = operand.apply(scalar.children()[0]);
      return text.type().equals(DataTypes.StringType)
          ? new ExpressionSql.Typed("CAST(length(" + text.sql() + ") AS INTEGER)", DataTypes.IntegerType) : null;
    }
    if (expression instanceof GeneralScalarExpression scalar && scalar.name().equals("CONCAT")
        && scalar.children().length >= 1) {
      java.util.List<String> parts = new java.util.ArrayList<>();
      for (Expression child : scalar.children()) {
        ExpressionSql.Typed part = operand.apply(child);
        if (!part.type().equals(DataTypes.StringType)) {
          return null;
        }
        parts.add(part.sql());
      }
      return new ExpressionSql.Typed("(" + String.join(" || ", parts) + ")", DataTypes.StringType);
    }
    if (expression instanceof GeneralScalarExpression scalar && TRIMS.containsKey(scalar.name())) {
      Expression[] children = scalar.children();
      if (children.length < 1 || children.length > 2) {
        return null;
      }
      ExpressionSql.Typed text = operand.apply(children[0]);
      String characters = children.length == 2 ? stringLiteral(children[1]) : " ";
      if (!text.type().equals(DataTypes.StringType) || characters == null) {
        return null;
      }
      return new ExpressionSql.Typed(TRIMS.get(scalar.name()) + "(" + text.sql() + ", " + Sql.string(characters)
          + ")", DataTypes.StringType);
    }
    return null;
  }

  /**
   * Spark's trims and DuckDB's: without characters Spark removes spaces (U+0020) only, DuckDB all Unicode spaces, so
   * the space is always named; with characters both remove any of them.
   */
  private static final java.util.Map<String, String> TRIMS = java.util.Map.of("TRIM", "trim", "LTRIM", "ltrim",
      "RTRIM", "rtrim");

  /**
   * Spark's {@code trunc(date, format)} formats (any case) and DuckDB's unit of the same meaning; a week starts on
   * Monday in both. Spark answers NULL for a format it does not know: such a format stays in Spark.
   */
  private static final java.util.Map<String, String> TRUNC_UNITS = java.util.Map.of("YEAR", "year", "YYYY", "year",
      "YY", "year", "QUARTER", "quarter", "MONTH", "month", "MM", "month", "MON", "month", "WEEK", "week");

  /** The most days a pushed {@code date_add} moves a date (about 8,200 years). */
  private static final int MAX_DAYS_ADDED = 3_000_000;

  private static String stringLiteral(Expression expression) {
    return expression instanceof Literal<?> literal && literal.dataType().equals(DataTypes.StringType)
        && literal.value() != null ? literal.value().toString() : null;
  }

  private static Integer integerLiteral(Expression expression) {
    return expression instanceof Literal<?> literal && literal.dataType() instanceof IntegerType
        && literal.value() instanceof Integer value ? value : null;
  }
}
