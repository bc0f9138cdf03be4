package io.thallus.spark;

import org.apache.spark.sql.catalyst.expressions.CurrentRow$;
import org.apache.spark.sql.catalyst.expressions.DenseRank;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.Rank;
import org.apache.spark.sql.catalyst.expressions.RowFrame$;
import org.apache.spark.sql.catalyst.expressions.RowNumber;
import org.apache.spark.sql.catalyst.expressions.SpecifiedWindowFrame;
import org.apache.spark.sql.catalyst.expressions.UnboundedFollowing$;
import org.apache.spark.sql.catalyst.expressions.UnboundedPreceding$;
import org.apache.spark.sql.catalyst.expressions.WindowExpression;
import org.apache.spark.sql.catalyst.expressions.WindowSpecDefinition;
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression;

/**
 * Window functions whose DuckDB value is Spark's: {@code row_number}, {@code rank}, {@code dense_rank}, and the
 * aggregates {@link PlanAggregates} pushes, over Spark's partitioning and order (NULL placement spelled out) and its
 * frame, always written out: ROWS or RANGE between UNBOUNDED PRECEDING, CURRENT ROW, UNBOUNDED FOLLOWING, or (ROWS
 * only) a constant number of rows. {@code row_number} over ties numbers them in an order neither engine fixes, as
 * in Spark alone. Other functions (lag, lead, ntile, percent_rank, ...) and RANGE offsets are refused.
 */
final class PlanWindows {
  private PlanWindows() {}

  static String sql(WindowExpression window, PlanExpressions expressions) {
    WindowSpecDefinition spec = window.windowSpec();
    StringBuilder over = new StringBuilder(" OVER (");
    if (!spec.partitionSpec().isEmpty()) {
      over.append("PARTITION BY ").append(String.join(", ", expressions.all(spec.partitionSpec())));
    }
    if (!spec.orderSpec().isEmpty()) {
      over.append(spec.partitionSpec().isEmpty() ? "" : " ").append("ORDER BY ")
          .append(expressions.sortKeys(spec.orderSpec()));
    }
    Expression function = window.windowFunction();
    String ranking = switch (function) {
      case RowNumber r -> "row_number()";
      case DenseRank r -> "dense_rank()";
      case Rank r -> "rank()";
      default -> null;
    };
    if (ranking != null) {
      return PlanExpressions.cast(ranking + over + ")", window.dataType());
    }
    if (!(function instanceof AggregateExpression aggregate)) {
      throw new PlanRefused("window function " + function.prettyName() + " has no DuckDB translation");
    }
    if (!(spec.frameSpecification() instanceof SpecifiedWindowFrame frame)) {
      throw new PlanRefused("a window frame Spark left unspecified");
    }
    boolean rows = frame.frameType() == RowFrame$.MODULE$;
    over.append(rows ? " ROWS" : " RANGE").append(" BETWEEN ").append(bound(frame.lower(), rows)).append(" AND ")
        .append(bound(frame.upper(), rows)).append(')');
    return PlanAggregates.sql(aggregate, expressions, over.toString());
  }

  private static String bound(Expression bound, boolean rows) {
    if (bound == UnboundedPreceding$.MODULE$) {
      return "UNBOUNDED PRECEDING";
    }
    if (bound == UnboundedFollowing$.MODULE$) {
      return "UNBOUNDED FOLLOWING";
    }
    if (bound == CurrentRow$.MODULE$) {
      return "CURRENT ROW";
    }
    if (rows && bound instanceof Literal literal && literal.value() instanceof Integer offset) {
      return offset < 0 ? -offset + " PRECEDING" : offset + " FOLLOWING";
    }
    throw new PlanRefused("window frame bound " + bound.sql() + (rows ? "" : " in a RANGE frame"));
  }
}
