package io.thallus.spark;

import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression;
import org.apache.spark.sql.catalyst.expressions.aggregate.Average;
import org.apache.spark.sql.catalyst.expressions.aggregate.Complete$;
import org.apache.spark.sql.catalyst.expressions.aggregate.Count;
import org.apache.spark.sql.catalyst.expressions.aggregate.Max;
import org.apache.spark.sql.catalyst.expressions.aggregate.Min;
import org.apache.spark.sql.catalyst.expressions.aggregate.Sum;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;

/**
 * The aggregate functions of a whole-plan Aggregate whose DuckDB value is Spark's: COUNT (one argument or *), SUM of
 * integers and decimals (exact in DuckDB, cast to Spark's result type; ANSI mode only, where an overflow fails in
 * both), AVG of decimals (exact sum over count, rounded half up to Spark's result scale), MIN and MAX of
 * non-floating types; each with DISTINCT and FILTER. SUM and AVG of floating point depend on the order of addition
 * in Spark and stay there.
 */
final class PlanAggregates {
  private PlanAggregates() {}

  /**
   * {@code aggregate} as DuckDB SQL; {@code over} follows every aggregate call in it (a window's OVER clause, or
   * nothing).
   */
  static String sql(AggregateExpression aggregate, PlanExpressions expressions, String over) {
    if (!(aggregate.mode() instanceof Complete$)) {
      throw new PlanRefused("aggregate in mode " + aggregate.mode());
    }
    String filter = (aggregate.filter().isDefined()
        ? " FILTER (WHERE " + expressions.sql(aggregate.filter().get()) + ")" : "") + over;
    String distinct = aggregate.isDistinct() ? "DISTINCT " : "";
    switch (aggregate.aggregateFunction()) {
      case Count count -> {
        if (count.children().size() != 1) {
          throw new PlanRefused("COUNT of several arguments");
        }
        Expression argument = count.children().head();
        if (argument instanceof Literal literal && literal.value() != null && !aggregate.isDistinct()) {
          return "count(*)" + filter;
        }
        if (aggregate.isDistinct() && (argument.dataType() instanceof FloatType
            || argument.dataType() instanceof DoubleType)) {
          throw new PlanRefused("COUNT(DISTINCT) of " + argument.dataType().simpleString()
              + ": Spark counts NaN and -0.0 as it normalises them");
        }
        return "count(" + distinct + expressions.sql(argument) + ")" + filter;
      }
      case Sum sum -> {
        DataType type = sum.child().dataType();
        if (!(isIntegral(type) || type instanceof DecimalType)) {
          throw new PlanRefused("SUM of " + type.simpleString() + ": Spark's value depends on the order of addition");
        }
        if (!"ANSI".equals(sum.evalContext().evalMode().toString())) {
          throw new PlanRefused("SUM outside ANSI mode: Spark wraps or gives NULL on overflow where DuckDB fails");
        }
        return PlanExpressions.cast("sum(" + distinct + expressions.sql(sum.child()) + ")" + filter, sum.dataType());
      }
      case Average average -> {
        if (!(average.child().dataType() instanceof DecimalType input)
            || !(average.dataType() instanceof DecimalType result)) {
          throw new PlanRefused("AVG of " + average.child().dataType().simpleString()
              + ": Spark sums it as a DOUBLE, whose value depends on the order of addition");
        }
        if (!"ANSI".equals(average.evalMode().toString())) {
          throw new PlanRefused("AVG outside ANSI mode: Spark gives NULL on overflow where DuckDB fails");
        }
        String argument = expressions.sql(average.child());
        return PlanDecimals.average("sum(" + distinct + argument + ")" + filter, input.scale(),
            "count(" + distinct + argument + ")" + filter, result);
      }
      case Min min -> {
        return minMax("min", min.child(), distinct, filter, expressions);
      }
      case Max max -> {
        return minMax("max", max.child(), distinct, filter, expressions);
      }
      default -> throw new PlanRefused("aggregate function " + aggregate.aggregateFunction().prettyName()
          + " has no DuckDB translation");
    }
  }

  private static String minMax(String function, Expression child, String distinct, String filter,
      PlanExpressions expressions) {
    DataType type = child.dataType();
    if (type instanceof FloatType || type instanceof DoubleType) {
      throw new PlanRefused(function + " of " + type.simpleString() + ": Spark orders NaN and -0.0 its own way");
    }
    return function + "(" + distinct + expressions.sql(child) + ")" + filter;
  }

  private static boolean isIntegral(DataType type) {
    return type instanceof ByteType || type instanceof ShortType || type instanceof IntegerType
        || type instanceof LongType;
  }
}
