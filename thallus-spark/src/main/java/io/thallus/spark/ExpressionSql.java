package io.thallus.spark;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.spark.sql.connector.expressions.Cast;
import org.apache.spark.sql.connector.expressions.Expression;
import org.apache.spark.sql.connector.expressions.GeneralScalarExpression;
import org.apache.spark.sql.connector.expressions.Literal;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.NullOrdering;
import org.apache.spark.sql.connector.expressions.SortDirection;
import org.apache.spark.sql.connector.expressions.SortOrder;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;

/**
 * Spark's V2 predicates and sort orders as DuckDB SQL over the scan's (already cast) columns. Only what DuckDB runs
 * with Spark's meaning is translated: comparisons of a column with a literal or another column of a scalar type,
 * null tests, IN, string prefix/suffix/contains and the boolean connectives. Anything else stays in Spark.
 */
final class ExpressionSql {
  private ExpressionSql() {}

  private static final Set<String> COMPARISONS = Set.of("=", "<>", "<", "<=", ">", ">=");

  /**
   * Types whose order and equality are the same in DuckDB and Spark: numbers, booleans, dates, timestamps,
   * strings (both compare UTF-8 bytes) and binary (unsigned bytes). Nested types and intervals are only tested for
   * NULL.
   */
  static boolean comparable(DataType type) {
    return type instanceof BooleanType || type instanceof ByteType || type instanceof ShortType
        || type instanceof IntegerType || type instanceof LongType || type instanceof FloatType
        || type instanceof DoubleType || type instanceof DecimalType || type instanceof StringType
        || type instanceof DateType || type instanceof TimestampType || type instanceof TimestampNTZType
        || type instanceof BinaryType;
  }

  static Optional<String> predicate(Predicate predicate, Map<String, DataType> columns) {
    try {
      return Optional.of(translate(predicate, columns));
    } catch (Unsupported e) {
      return Optional.empty();
    }
  }

  static Optional<String> sortOrder(SortOrder order, Map<String, DataType> columns) {
    try {
      Typed key = value(order.expression(), columns);
      if (!comparable(key.type())) {
        throw new Unsupported();
      }
      return Optional.of(key.sql() + (order.direction() == SortDirection.ASCENDING ? " ASC" : " DESC")
          + (order.nullOrdering() == NullOrdering.NULLS_FIRST ? " NULLS FIRST" : " NULLS LAST"));
    } catch (Unsupported e) {
      return Optional.empty();
    }
  }

  /** A plain top-level column reference of the scan, quoted; anything else is unsupported. */
  static Optional<String> columnName(Expression expression, Map<String, DataType> columns) {
    if (expression instanceof NamedReference reference && reference.fieldNames().length == 1
        && columns.containsKey(reference.fieldNames()[0])) {
      return Optional.of(reference.fieldNames()[0]);
    }
    return Optional.empty();
  }

  private static String translate(Expression expression, Map<String, DataType> columns) {
    if (!(expression instanceof Predicate predicate)) {
      throw new Unsupported();
    }
    Expression[] children = predicate.children();
    String name = predicate.name();
    switch (name) {
      case "ALWAYS_TRUE":
        return "TRUE";
      case "ALWAYS_FALSE":
        return "FALSE";
      case "AND":
        return "(" + translate(children[0], columns) + " AND " + translate(children[1], columns) + ")";
      case "OR":
        return "(" + translate(children[0], columns) + " OR " + translate(children[1], columns) + ")";
      case "NOT":
        return "(NOT " + translate(children[0], columns) + ")";
      case "IS_NULL":
        return "(" + column(children[0], columns, false) + " IS NULL)";
      case "IS_NOT_NULL":
        return "(" + column(children[0], columns, false) + " IS NOT NULL)";
      case "STARTS_WITH":
        return "starts_with(" + stringOperand(children[0], columns) + ", " + stringOperand(children[1], columns) + ")";
      case "ENDS_WITH":
        return "suffix(" + stringOperand(children[0], columns) + ", " + stringOperand(children[1], columns) + ")";
      case "CONTAINS":
        return "contains(" + stringOperand(children[0], columns) + ", " + stringOperand(children[1], columns) + ")";
      case "IN": {
        String column = column(children[0], columns, true);
        List<String> values = new ArrayList<>();
        for (int i = 1; i < children.length; i++) {
          values.add(operand(children[i], columns));
        }
        if (values.isEmpty()) {
          throw new Unsupported();
        }
        return "(" + column + " IN (" + String.join(", ", values) + "))";
      }
      case "<=>":
        return "(" + operand(children[0], columns) + " IS NOT DISTINCT FROM " + operand(children[1], columns) + ")";
      default:
        if (COMPARISONS.contains(name) && children.length == 2) {
          return "(" + operand(children[0], columns) + " " + name + " " + operand(children[1], columns) + ")";
        }
        throw new Unsupported();
    }
  }

  private static String stringOperand(Expression expression, Map<String, DataType> columns) {
    if (expression instanceof Literal<?> literal && !(literal.dataType() instanceof StringType)) {
      throw new Unsupported();
    }
    if (expression instanceof NamedReference reference
        && !(columns.get(reference.fieldNames()[0]) instanceof StringType)) {
      throw new Unsupported();
    }
    return operand(expression, columns);
  }

  private static String operand(Expression expression, Map<String, DataType> columns) {
    Typed value = value(expression, columns);
    if (!comparable(value.type())) {
      throw new Unsupported();
    }
    return value.sql();
  }

  /**
   * A DuckDB expression and the Spark type of its value, in two forms. {@code sql} computes decimals in 38 digits
   * (128 bits) and casts each result to Spark's precision: exact wherever Spark's value is. {@code narrow} leaves DuckDB its own decimal types (at most 18 digits while the inputs fit: 64-bit,
   * twice as fast on TPC-H Q1) with the same scale or more: its value is the same, or DuckDB fails with an
   * overflow where Spark's wider type would not. {@link ThallusScanBuilder} runs the narrow form where nothing is
   * sent before the whole input is read, and the exact form again after such an overflow.
   */
  record Typed(String sql, String narrow, DataType type) {
    Typed(String sql, DataType type) {
      this(sql, sql, type);
    }

    /** The narrow form with the type Spark expects of it (a value that leaves the query). */
    String narrowAsSpark() {
      return narrow.equals(sql) ? sql : "CAST(" + narrow + " AS " + duckType(type) + ")";
    }
  }

  /**
   * A value expression (what aggregates, group keys and sort keys are made of) as DuckDB SQL, with the type Spark
   * gives it, or empty where DuckDB would compute something else.
   */
  static Optional<Typed> valueOf(Expression expression, Map<String, DataType> columns) {
    try {
      return Optional.of(value(expression, columns));
    } catch (Unsupported e) {
      return Optional.empty();
    }
  }

  /**
   * Spark hands over expressions whose children it has already coerced to common types (casts included, literals
   * typed), and pushes arithmetic only in ANSI mode, where an overflow is an error as it is in DuckDB. What is
   * translated computes the same value in both:
   * <ul>
   *   <li>{@code +}, {@code -}, {@code *} and unary minus of integers (same type both sides: DuckDB keeps the type
   *       and fails on overflow, as ANSI Spark does) and of decimals, cast to the precision and scale Spark gives
   *       the result, refused where Spark would round the result's scale away to fit 38 digits (DuckDB does
   *       not);</li>
   *   <li>CASE WHEN, COALESCE and ABS over such values; casts that widen exactly (integers to wider integers or to
   *       decimals that hold them, decimals to more digits and scale, dates to strings, numbers to strings are
   *       not: Spark and DuckDB print them differently);</li>
   *   <li>the date and string functions of {@link DateStringSql}.</li>
   * </ul>
   * Remainder by a positive integer literal is pushed; division, other remainders and floating point arithmetic stay
   * in Spark: Spark's decimal division has its own scale
   * rules, DuckDB divides decimals as doubles, and a division by zero is an error in one and NULL in the other.
   */
  private static Typed value(Expression expression, Map<String, DataType> columns) {
    if (expression instanceof Literal<?> literal) {
      return new Typed(literal(literal.value(), literal.dataType()), literal.dataType());
    }
    if (expression instanceof NamedReference) {
      String name = columnName(expression, columns).orElseThrow(Unsupported::new);
      return new Typed(Sql.identifier(name), columns.get(name));
    }
    if (expression instanceof Cast cast) {
      Typed input = value(cast.expression(), columns);
      DataType target = cast.dataType();
      if (input.type().equals(target)) {
        return input;
      }
      if (!widensExactly(input.type(), target) && !wallClockDate(input.type(), target)) {
        throw new Unsupported();
      }
      // Widening a decimal changes no value: the narrow form leaves it to DuckDB's own types.
      String narrow = input.type() instanceof DecimalType && target instanceof DecimalType ? input.narrow()
          : "CAST(" + input.narrow() + " AS " + duckType(target) + ")";
      return new Typed("CAST(" + input.sql() + " AS " + duckType(target) + ")", narrow, target);
    }
    if (expression instanceof Predicate) {
      return new Typed(translate(expression, columns), DataTypes.BooleanType);
    }
    Typed function = DateStringSql.translate(expression, e -> value(e, columns));
    if (function != null) {
      return function;
    }
    if (!(expression instanceof GeneralScalarExpression scalar)) {
      throw new Unsupported();
    }
    Expression[] children = scalar.children();
    switch (scalar.name()) {
      case "+", "-", "*" -> {
        if (children.length == 1 && scalar.name().equals("-")) {
          Typed operand = value(children[0], columns);
          if (!isInteger(operand.type()) && !(operand.type() instanceof DecimalType)) {
            throw new Unsupported();
          }
          return new Typed("(- " + operand.sql() + ")", "(- " + operand.narrow() + ")", operand.type());
        }
        if (children.length != 2) {
          throw new Unsupported();
        }
        Typed left = value(children[0], columns);
        Typed right = value(children[1], columns);
        DataType type = arithmeticType(scalar.name(), left.type(), right.type());
        String narrow = "(" + left.narrow() + " " + scalar.name() + " " + right.narrow() + ")";
        if (!(type instanceof DecimalType)) {
          return new Typed("(" + left.sql() + " " + scalar.name() + " " + right.sql() + ")", narrow, type);
        }
        // DuckDB multiplies and adds decimals of up to 18 digits in 18 digits, failing beyond: it computes in 38
        // here (the operands widened, scale kept), and the result is cast to Spark's type.
        String sql = "(" + widest(left) + " " + scalar.name() + " " + widest(right) + ")";
        return new Typed("CAST(" + sql + " AS " + duckType(type) + ")", narrow, type);
      }
      case "%" -> {
        // Only an integer by a positive literal (dayofweek arrives as DAY_OF_WEEK % 7 + 1): both truncate toward
        // zero, the sign following the dividend, and neither can overflow or divide by zero.
        Typed dividend = value(children[0], columns);
        if (children.length != 2 || !isInteger(dividend.type()) || !(children[1] instanceof Literal<?> divisor)
            || !divisor.dataType().equals(dividend.type()) || !(divisor.value() instanceof Number number)
            || number.longValue() <= 0) {
          throw new Unsupported();
        }
        return new Typed("(" + dividend.sql() + " % " + number.longValue() + ")",
            "(" + dividend.narrow() + " % " + number.longValue() + ")", dividend.type());
      }
      case "ABS" -> {
        Typed operand = value(children[0], columns);
        if (!isInteger(operand.type()) && !(operand.type() instanceof DecimalType)) {
          throw new Unsupported();
        }
        return new Typed("abs(" + operand.sql() + ")", "abs(" + operand.narrow() + ")", operand.type());
      }
      case "COALESCE" -> {
        List<String> parts = new ArrayList<>();
        List<String> narrow = new ArrayList<>();
        DataType type = null;
        for (Expression child : children) {
          Typed part = value(child, columns);
          if (type != null && !type.equals(part.type())) {
            throw new Unsupported();
          }
          type = part.type();
          parts.add(part.sql());
          narrow.add(part.narrow());
        }
        if (type == null || !comparable(type)) {
          throw new Unsupported();
        }
        return new Typed("coalesce(" + String.join(", ", parts) + ")", "coalesce(" + String.join(", ", narrow) + ")",
            type);
      }
      case "CASE_WHEN" -> {
        StringBuilder sql = new StringBuilder("(CASE");
        StringBuilder narrow = new StringBuilder("(CASE");
        DataType type = null;
        int i = 0;
        for (; i + 1 < children.length; i += 2) {
          Typed then = value(children[i + 1], columns);
          if (type != null && !type.equals(then.type())) {
            throw new Unsupported();
          }
          type = then.type();
          String when = " WHEN " + translate(children[i], columns) + " THEN ";
          sql.append(when).append(then.sql());
          narrow.append(when).append(then.narrow());
        }
        if (i < children.length) {
          Typed otherwise = value(children[i], columns);
          if (type != null && !type.equals(otherwise.type())) {
            throw new Unsupported();
          }
          sql.append(" ELSE ").append(otherwise.sql());
          narrow.append(" ELSE ").append(otherwise.narrow());
        }
        if (type == null || !comparable(type)) {
          throw new Unsupported();
        }
        return new Typed(sql.append(" END)").toString(), narrow.append(" END)").toString(), type);
      }
      default -> throw new Unsupported();
    }
  }

  /** A decimal operand as DECIMAL(38, its scale), for DuckDB to compute in 128 bits. */
  private static String widest(Typed operand) {
    return "CAST(" + operand.sql() + " AS DECIMAL(38," + ((DecimalType) operand.type()).scale() + "))";
  }

  private static boolean isInteger(DataType type) {
    return type instanceof ByteType || type instanceof ShortType || type instanceof IntegerType
        || type instanceof LongType;
  }

  /** Digits an integer type needs as a decimal (Spark's own table). */
  private static int integerDigits(DataType type) {
    return switch (type) {
      case ByteType t -> 3;
      case ShortType t -> 5;
      case IntegerType t -> 10;
      case LongType t -> 20;
      default -> throw new Unsupported();
    };
  }

  private static int integerRank(DataType type) {
    return integerDigits(type);
  }

  /** The type Spark gives {@code left op right} (its operands already coerced), where DuckDB's value is the same. */
  private static DataType arithmeticType(String op, DataType left, DataType right) {
    if (isInteger(left) && left.equals(right)) {
      return left;
    }
    if (left instanceof DecimalType l && right instanceof DecimalType r) {
      int precision;
      int scale;
      if (op.equals("*")) {
        precision = l.precision() + r.precision() + 1;
        scale = l.scale() + r.scale();
      } else {
        scale = Math.max(l.scale(), r.scale());
        precision = Math.max(l.precision() - l.scale(), r.precision() - r.scale()) + scale + 1;
      }
      if (precision > 38) {
        // Spark caps the precision at 38 and keeps at least min(scale, 6) digits of scale, fewer where the integer
        // digits need them: a result whose scale it cuts is rounded, which DuckDB would not do.
        int integerDigits = precision - scale;
        int keptScale = Math.max(38 - integerDigits, Math.min(scale, 6));
        if (keptScale < scale) {
          throw new Unsupported();
        }
        precision = 38;
      }
      return DataTypes.createDecimalType(precision, scale);
    }
    throw new Unsupported();
  }

  /**
   * A timestamp without time zone to its date: the date part of the wall-clock time in both (Spark floors the
   * microseconds to days, DuckDB drops the time), so {@code year(ts)} of such a column is pushed. A timestamp with
   * time zone is cast in the session's time zone by Spark: not pushed.
   */
  private static boolean wallClockDate(DataType from, DataType to) {
    return from instanceof org.apache.spark.sql.types.TimestampNTZType && to.equals(DataTypes.DateType);
  }

  private static boolean widensExactly(DataType from, DataType to) {
    if (isInteger(from) && isInteger(to)) {
      return integerRank(to) >= integerRank(from);
    }
    if (isInteger(from) && to instanceof DecimalType d) {
      return d.precision() - d.scale() >= integerDigits(from);
    }
    if (from instanceof DecimalType f && to instanceof DecimalType t) {
      return t.scale() >= f.scale() && t.precision() - t.scale() >= f.precision() - f.scale();
    }
    return false;
  }

  /** The DuckDB type of the Spark types value expressions use. */
  static String duckType(DataType type) {
    return switch (type) {
      case BooleanType t -> "BOOLEAN";
      case ByteType t -> "TINYINT";
      case ShortType t -> "SMALLINT";
      case IntegerType t -> "INTEGER";
      case LongType t -> "BIGINT";
      case FloatType t -> "FLOAT";
      case DoubleType t -> "DOUBLE";
      case DecimalType t -> "DECIMAL(" + t.precision() + "," + t.scale() + ")";
      case StringType t -> "VARCHAR";
      case DateType t -> "DATE";
      case TimestampType t -> "TIMESTAMPTZ";
      case TimestampNTZType t -> "TIMESTAMP";
      case BinaryType t -> "BLOB";
      default -> throw new Unsupported();
    };
  }

  private static String column(Expression expression, Map<String, DataType> columns, boolean mustCompare) {
    String name = columnName(expression, columns).orElseThrow(Unsupported::new);
    if (mustCompare && !comparable(columns.get(name))) {
      throw new Unsupported();
    }
    return Sql.identifier(name);
  }

  /** A Spark literal (in Spark's internal representation) as a typed DuckDB literal. */
  static String literal(Object value, DataType type) {
    if (value == null) {
      throw new Unsupported(); // Spark folds comparisons with NULL itself; no need to reason about them here
    }
    return switch (type) {
      case BooleanType t -> value.toString().toUpperCase(java.util.Locale.ROOT);
      case ByteType t -> "CAST(" + value + " AS TINYINT)";
      case ShortType t -> "CAST(" + value + " AS SMALLINT)";
      case IntegerType t -> "CAST(" + value + " AS INTEGER)";
      case LongType t -> "CAST(" + value + " AS BIGINT)";
      case FloatType t -> "CAST('" + value + "' AS FLOAT)";
      case DoubleType t -> "CAST('" + value + "' AS DOUBLE)";
      case DecimalType t -> {
        BigDecimal decimal = value instanceof Decimal d ? d.toJavaBigDecimal() : new BigDecimal(value.toString());
        yield "CAST('" + decimal.toPlainString() + "' AS DECIMAL(" + t.precision() + "," + t.scale() + "))";
      }
      case StringType t -> Sql.string(value.toString());
      case DateType t -> "DATE '" + LocalDate.ofEpochDay(((Number) value).intValue()) + "'";
      case TimestampType t -> "TIMESTAMPTZ '" + micros((Long) value).atOffset(ZoneOffset.UTC).toLocalDateTime()
          + "+00'";
      case TimestampNTZType t -> "TIMESTAMP '" + LocalDateTime.ofInstant(micros((Long) value), ZoneOffset.UTC) + "'";
      case BinaryType t -> ((byte[]) value).length == 0 ? "''::BLOB"
          : "'\\x" + HexFormat.of().withDelimiter("\\x").formatHex((byte[]) value) + "'::BLOB";
      default -> throw new Unsupported();
    };
  }

  private static Instant micros(long micros) {
    return Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1000L);
  }

  /** Thrown while translating when a part has no faithful DuckDB form; the predicate then stays in Spark. */
  private static final class Unsupported extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Unsupported() {
      super(null, null, false, false);
    }
  }
}
