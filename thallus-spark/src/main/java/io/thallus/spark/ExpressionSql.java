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
import org.apache.spark.sql.connector.expressions.Expression;
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
      String column = column(order.expression(), columns, true);
      return Optional.of(column + (order.direction() == SortDirection.ASCENDING ? " ASC" : " DESC")
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
    if (expression instanceof Literal<?> literal) {
      return literal(literal.value(), literal.dataType());
    }
    return column(expression, columns, true);
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
