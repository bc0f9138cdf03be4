package io.thallus.spark;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.catalyst.expressions.Add;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.BinaryComparison;
import org.apache.spark.sql.catalyst.expressions.CaseWhen;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.Coalesce;
import org.apache.spark.sql.catalyst.expressions.Contains;
import org.apache.spark.sql.catalyst.expressions.DayOfMonth;
import org.apache.spark.sql.catalyst.expressions.Divide;
import org.apache.spark.sql.catalyst.expressions.EndsWith;
import org.apache.spark.sql.catalyst.expressions.EqualNullSafe;
import org.apache.spark.sql.catalyst.expressions.EqualTo;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GreaterThan;
import org.apache.spark.sql.catalyst.expressions.GreaterThanOrEqual;
import org.apache.spark.sql.catalyst.expressions.If;
import org.apache.spark.sql.catalyst.expressions.In;
import org.apache.spark.sql.catalyst.expressions.InSet;
import org.apache.spark.sql.catalyst.expressions.IsNotNull;
import org.apache.spark.sql.catalyst.expressions.IsNull;
import org.apache.spark.sql.catalyst.expressions.KnownNotNull;
import org.apache.spark.sql.catalyst.expressions.LessThan;
import org.apache.spark.sql.catalyst.expressions.LessThanOrEqual;
import org.apache.spark.sql.catalyst.expressions.Like;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.Month;
import org.apache.spark.sql.catalyst.expressions.Multiply;
import org.apache.spark.sql.catalyst.expressions.Not;
import org.apache.spark.sql.catalyst.expressions.Or;
import org.apache.spark.sql.catalyst.expressions.Quarter;
import org.apache.spark.sql.catalyst.expressions.ScalarSubquery;
import org.apache.spark.sql.catalyst.expressions.SortOrder;
import org.apache.spark.sql.catalyst.expressions.StartsWith;
import org.apache.spark.sql.catalyst.expressions.Substring;
import org.apache.spark.sql.catalyst.expressions.Subtract;
import org.apache.spark.sql.catalyst.expressions.UnaryMinus;
import org.apache.spark.sql.catalyst.expressions.Year;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
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
import scala.Tuple2;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Catalyst expressions of an optimized plan as DuckDB SQL that computes Spark's value in Spark's type. Every value
 * expression is cast to the Spark type Catalyst gave it, so decimal results carry Spark's precision and scale
 * (DuckDB computes exactly and the cast rounds half up, as Spark does). What could differ is refused:
 * integer and decimal arithmetic outside ANSI mode (Spark wraps or gives NULL, DuckDB fails), comparisons and sorts of
 * floating point (Spark orders NaN and -0.0 its own way), strings with a collation other than UTF8_BINARY, casts
 * other than exact widenings, and any expression not named here.
 */
final class PlanExpressions {
  /** Writes a scalar subquery's plan; the plan translator itself. */
  interface Subqueries {
    String scalar(LogicalPlan plan);
  }

  private final Subqueries subqueries;
  /** True while writing an Aggregate's result expressions, the only place aggregate functions may be. */
  private boolean inAggregate;

  PlanExpressions(Subqueries subqueries) {
    this.subqueries = subqueries;
  }

  /** {@code e}, an Aggregate's result expression, with its aggregate functions. */
  String aggregateResult(Expression e) {
    boolean outer = inAggregate;
    inAggregate = true;
    try {
      return sql(e);
    } finally {
      inAggregate = outer;
    }
  }

  /** The column a plan's attribute is in the generated SQL: its name and expression id, unique in one query. */
  static String column(Attribute attribute) {
    return Sql.identifier(attribute.name() + "#" + attribute.exprId().id());
  }

  String sql(Expression e) {
    checkType(e.dataType(), e);
    return switch (e) {
      case AttributeReference a -> column(a);
      case Alias a -> sql(a.child());
      case KnownNotNull k -> sql(k.child());
      case Literal l -> literal(l.value(), l.dataType());
      case Cast c -> cast(c);
      case Add a -> arithmetic(a, "+", a.left(), a.right(), a.evalContext().evalMode().toString());
      case Subtract s -> arithmetic(s, "-", s.left(), s.right(), s.evalContext().evalMode().toString());
      case Multiply m -> arithmetic(m, "*", m.left(), m.right(), m.evalContext().evalMode().toString());
      case Divide d -> divide(d);
      case org.apache.spark.sql.catalyst.expressions.DecimalDivideWithOverflowCheck d -> averageQuotient(d);
      case UnaryMinus u -> {
        checkNumeric(u, u.child().dataType(), u.failOnError() ? "ANSI" : "LEGACY");
        yield cast("(- " + sql(u.child()) + ")", u.dataType());
      }
      case EqualNullSafe c -> comparison(c, "IS NOT DISTINCT FROM");
      case EqualTo c -> comparison(c, "=");
      case LessThan c -> comparison(c, "<");
      case LessThanOrEqual c -> comparison(c, "<=");
      case GreaterThan c -> comparison(c, ">");
      case GreaterThanOrEqual c -> comparison(c, ">=");
      case And a -> "(" + sql(a.left()) + " AND " + sql(a.right()) + ")";
      case Or o -> "(" + sql(o.left()) + " OR " + sql(o.right()) + ")";
      case Not n -> "(NOT " + sql(n.child()) + ")";
      case IsNull n -> "(" + sql(n.child()) + " IS NULL)";
      case IsNotNull n -> "(" + sql(n.child()) + " IS NOT NULL)";
      case In in -> in(in);
      case InSet in -> inSet(in);
      case Like like -> like(like);
      case StartsWith s -> "starts_with(" + sql(s.left()) + ", " + sql(s.right()) + ")";
      case EndsWith s -> "ends_with(" + sql(s.left()) + ", " + sql(s.right()) + ")";
      case Contains s -> "contains(" + sql(s.left()) + ", " + sql(s.right()) + ")";
      case Substring s -> substring(s);
      case Year y -> datePart("year", y.child(), y);
      case Quarter q -> datePart("quarter", q.child(), q);
      case Month m -> datePart("month", m.child(), m);
      case DayOfMonth d -> datePart("day", d.child(), d);
      case CaseWhen c -> caseWhen(c);
      case If i -> "(CASE WHEN " + sql(i.predicate()) + " THEN " + cast(sql(i.trueValue()), i.dataType()) + " ELSE "
          + cast(sql(i.falseValue()), i.dataType()) + " END)";
      case Coalesce c -> "coalesce(" + String.join(", ", all(c.children())) + ")";
      case ScalarSubquery s -> scalarSubquery(s);
      case org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression a when inAggregate ->
          PlanAggregates.sql(a, this, "");
      default -> throw new PlanRefused("expression " + e.prettyName() + " (" + e.getClass().getSimpleName()
          + ") has no DuckDB translation: " + e.sql());
    };
  }

  /** Sort keys in Spark's order with its NULL placement spelled out; floating-point keys are refused (NaN, -0.0). */
  String sortKeys(scala.collection.Seq<SortOrder> orders) {
    List<String> keys = new ArrayList<>();
    for (SortOrder order : CollectionConverters.asJava(orders)) {
      if (isFloating(order.dataType())) {
        throw new PlanRefused("sort by " + order.dataType().simpleString() + ": Spark orders NaN and -0.0 its own way");
      }
      keys.add(sql(order.child()) + (order.isAscending() ? " ASC" : " DESC")
          + (order.nullOrdering().sql().equals("NULLS FIRST") ? " NULLS FIRST" : " NULLS LAST"));
    }
    return String.join(", ", keys);
  }

  List<String> all(scala.collection.Seq<Expression> expressions) {
    List<String> sql = new ArrayList<>();
    for (Expression e : CollectionConverters.asJava(expressions)) {
      sql.add(sql(e));
    }
    return sql;
  }

  /** Types whose values and comparisons are the same in DuckDB; a non-binary collation is not. */
  static void checkType(DataType type, Object where) {
    switch (type) {
      case StringType s -> {
        if (!s.isUTF8BinaryCollation()) {
          throw new PlanRefused("collation " + s.typeName() + " of " + where + ": DuckDB compares bytes");
        }
      }
      case BooleanType t -> { }
      case ByteType t -> { }
      case ShortType t -> { }
      case IntegerType t -> { }
      case LongType t -> { }
      case FloatType t -> { }
      case DoubleType t -> { }
      case DecimalType t -> { }
      case DateType t -> { }
      case TimestampType t -> { }
      case TimestampNTZType t -> { }
      case BinaryType t -> { }
      default -> throw new PlanRefused("type " + type.simpleString() + " of " + where + " is not pushed");
    }
  }

  static String duckType(DataType type) {
    checkType(type, type);
    return ExpressionSql.duckType(type);
  }

  static String cast(String sql, DataType type) {
    return "CAST(" + sql + " AS " + duckType(type) + ")";
  }

  static String literal(Object value, DataType type) {
    if (value == null) {
      return cast("NULL", type);
    }
    try {
      return ExpressionSql.literal(value instanceof org.apache.spark.unsafe.types.UTF8String u ? u.toString() : value,
          type);
    } catch (RuntimeException e) {
      throw new PlanRefused("literal of type " + type.simpleString() + " is not pushed");
    }
  }

  private static boolean isIntegral(DataType type) {
    return type instanceof ByteType || type instanceof ShortType || type instanceof IntegerType
        || type instanceof LongType;
  }

  static boolean isFloating(DataType type) {
    return type instanceof FloatType || type instanceof DoubleType;
  }

  /**
   * Integer and decimal arithmetic match only in ANSI mode, where both engines fail on overflow; outside it Spark
   * wraps integers and turns a decimal overflow into NULL. FLOAT is refused (DuckDB may widen it).
   */
  private static void checkNumeric(Expression e, DataType type, String evalMode) {
    if ((isIntegral(type) || type instanceof DecimalType) && !"ANSI".equals(evalMode)) {
      throw new PlanRefused(e.prettyName() + " of " + type.simpleString() + " outside ANSI mode (" + evalMode
          + "): Spark wraps or gives NULL on overflow where DuckDB fails");
    }
    if (type instanceof FloatType || !(isIntegral(type) || type instanceof DecimalType || isFloating(type))) {
      throw new PlanRefused(e.prettyName() + " of " + type.simpleString() + " is not pushed");
    }
  }

  private String arithmetic(Expression e, String op, Expression left, Expression right, String evalMode) {
    checkNumeric(e, e.dataType(), evalMode);
    return cast("(" + sql(left) + " " + op + " " + sql(right) + ")", e.dataType());
  }

  /**
   * Spark divides doubles as IEEE does and fails on a zero divisor in ANSI mode (NULL otherwise); decimals it divides
   * exactly and rounds half up to the result's scale, which DuckDB (whose decimal division gives a DOUBLE) does not:
   * the quotient is computed here from the unscaled values in 128-bit integers ({@link PlanDecimals}).
   */
  private String divide(Divide d) {
    String mode = d.evalContext().evalMode().toString();
    String zero = "ANSI".equals(mode) ? "error('[DIVIDE_BY_ZERO] Division by zero: ' || CAST(" + sql(d.right())
        + " AS VARCHAR))" : cast("NULL", d.dataType());
    if (d.dataType() instanceof DoubleType) {
      return "(CASE WHEN " + sql(d.right()) + " = 0 THEN " + zero + " ELSE " + sql(d.left()) + " / " + sql(d.right())
          + " END)";
    }
    if (d.dataType() instanceof DecimalType result && d.left().dataType() instanceof DecimalType left
        && d.right().dataType() instanceof DecimalType right) {
      checkNumeric(d, result, mode);
      return "(CASE WHEN " + sql(d.right()) + " = 0 THEN " + zero + " ELSE "
          + PlanDecimals.quotient(sql(d.left()), left, sql(d.right()), right, result) + " END)";
    }
    throw new PlanRefused("division of " + d.dataType().simpleString() + " is not pushed");
  }

  /**
   * The division Spark's AVG of a decimal ends with (sum over count, the scan having pushed both): Spark's Decimal
   * division gives NULL for a zero divisor; an overflow fails unless {@code nullOnOverflow}, which is refused.
   */
  private String averageQuotient(org.apache.spark.sql.catalyst.expressions.DecimalDivideWithOverflowCheck d) {
    if (d.nullOnOverflow() || !(d.left().dataType() instanceof DecimalType left)
        || !(d.right().dataType() instanceof DecimalType right)) {
      throw new PlanRefused("a decimal division that gives NULL on overflow");
    }
    return "(CASE WHEN " + sql(d.right()) + " = 0 THEN " + cast("NULL", d.dataType()) + " ELSE "
        + PlanDecimals.quotient(sql(d.left()), left, sql(d.right()), right, d.dataType()) + " END)";
  }

  private String comparison(BinaryComparison c, String op) {
    DataType type = c.left().dataType();
    if (isFloating(type)) {
      throw new PlanRefused("comparison of " + type.simpleString() + ": Spark orders NaN and -0.0 its own way");
    }
    return "(" + sql(c.left()) + " " + op + " " + sql(c.right()) + ")";
  }

  private String in(In in) {
    if (isFloating(in.value().dataType())) {
      throw new PlanRefused("IN over " + in.value().dataType().simpleString() + ": NaN compares differently");
    }
    return "(" + sql(in.value()) + " IN (" + String.join(", ", all(in.list())) + "))";
  }

  private String inSet(InSet in) {
    DataType type = in.child().dataType();
    if (isFloating(type)) {
      throw new PlanRefused("IN over " + type.simpleString() + ": NaN compares differently");
    }
    List<String> values = new ArrayList<>();
    for (Object value : CollectionConverters.asJava(in.hset())) {
      values.add(literal(value, type));
    }
    values.sort(null); // the same SQL for the same set, whatever the set's iteration order
    return "(" + sql(in.child()) + " IN (" + String.join(", ", values) + "))";
  }

  /**
   * LIKE with a constant pattern and no escape character in it: {@code %} and {@code _} (one character, not one byte)
   * mean the same in both; Spark's escape rules (an escape must precede {@code _}, {@code %} or itself) are not.
   */
  private String like(Like like) {
    if (!(like.right() instanceof Literal pattern) || pattern.value() == null) {
      throw new PlanRefused("LIKE with a pattern that is not a constant");
    }
    String text = pattern.value().toString();
    if (text.indexOf(like.escapeChar()) >= 0) {
      throw new PlanRefused("LIKE pattern with the escape character '" + like.escapeChar() + "'");
    }
    return "(" + sql(like.left()) + " LIKE " + Sql.string(text) + ")";
  }

  /** Spark counts a start of 0 as 1 and a negative one from the end; only starts from 1 mean the same. */
  private String substring(Substring s) {
    if (!(s.str().dataType() instanceof StringType) || !(s.pos() instanceof Literal pos)
        || !(pos.value() instanceof Integer start) || start < 1 || !(s.len() instanceof Literal len)
        || !(len.value() instanceof Integer length) || length < 0) {
      throw new PlanRefused("substring other than of a string from a constant start >= 1 for a constant length >= 0");
    }
    return "substring(" + sql(s.str()) + ", " + start + ", " + length + ")";
  }

  private String datePart(String part, Expression child, Expression e) {
    if (!(child.dataType() instanceof DateType)) {
      throw new PlanRefused(e.prettyName() + " of " + child.dataType().simpleString() + " is not pushed");
    }
    return cast(part + "(" + sql(child) + ")", e.dataType());
  }

  private String caseWhen(CaseWhen c) {
    StringBuilder sql = new StringBuilder("(CASE");
    for (Tuple2<Expression, Expression> branch : CollectionConverters.asJava(c.branches())) {
      sql.append(" WHEN ").append(sql(branch._1())).append(" THEN ").append(cast(sql(branch._2()), c.dataType()));
    }
    if (c.elseValue().isDefined()) {
      sql.append(" ELSE ").append(cast(sql(c.elseValue().get()), c.dataType()));
    }
    return sql.append(" END)").toString();
  }

  /**
   * Exact widenings only: an integer to a wider integer, an integer or decimal to a decimal that holds every value
   * (or, in ANSI mode, any decimal: both engines then fail on overflow and round half up), an integer to DOUBLE.
   * A decimal to DOUBLE is refused: DuckDB's conversion is not always the nearest double, Spark's is.
   */
  private String cast(Cast c) {
    DataType from = c.child().dataType();
    DataType to = c.dataType();
    if (from.equals(to)) {
      return sql(c.child());
    }
    boolean ansi = "ANSI".equals(c.evalMode().toString());
    boolean exact = isIntegral(from) && isIntegral(to) && from.defaultSize() <= to.defaultSize()
        || (isIntegral(from) || from instanceof DecimalType) && to instanceof DecimalType && ansi
        || isIntegral(from) && !(from instanceof LongType) && to instanceof DoubleType
        || from instanceof FloatType && to instanceof DoubleType;
    if (!exact) {
      throw new PlanRefused("cast from " + from.simpleString() + " to " + to.simpleString() + " is not pushed"
          + (ansi ? "" : " outside ANSI mode"));
    }
    return cast(sql(c.child()), to);
  }

  private String scalarSubquery(ScalarSubquery s) {
    if (!s.outerAttrs().isEmpty() || !s.joinCond().isEmpty()) {
      throw new PlanRefused("correlated scalar subquery");
    }
    boolean outer = inAggregate;
    inAggregate = false;
    try {
      return subqueries.scalar(s.plan());
    } finally {
      inAggregate = outer;
    }
  }
}
