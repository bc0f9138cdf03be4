package io.thallus.spark.shuffle;

import java.util.function.UnaryOperator;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.execution.ColumnarRule;
import org.apache.spark.sql.execution.ColumnarToRowExec;
import org.apache.spark.sql.execution.RowToColumnarExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.exchange.ShuffleExchangeExec;
import org.apache.spark.sql.internal.SQLConf;
import scala.Function1;
import scala.runtime.AbstractPartialFunction;

/**
 * The two planner rules of the Thallus exchange, run by Spark where it applies columnar rules (for a whole plan, and
 * in AQE for each shuffle stage):
 *
 * <ul>
 *   <li>before Spark inserts its row/column transitions, Spark's shuffle exchange becomes the Thallus exchange
 *       where {@link ExchangeSupport} takes it;
 *   <li>after, the transition Spark put under the Thallus exchange goes away: the exchange converts rows to Arrow
 *       itself, once, as it partitions them (no RowToColumnar first), and takes a columnar child's batches as they
 *       come (no ColumnarToRow first).
 * </ul>
 */
final class ExchangeRules extends ColumnarRule {
  ExchangeRules() {}

  @Override
  public Rule<SparkPlan> preColumnarTransitions() {
    return new PlanRule("ThallusShuffleExchange", plan -> {
      if (!new ShuffleConf(SQLConf.get()).enabled()) {
        return plan;
      }
      return transformUp(plan, node -> node instanceof ShuffleExchangeExec exchange && ExchangeSupport.takes(exchange)
          ? ThallusShuffleExchangeExec.create(exchange.outputPartitioning(), exchange.child(),
              exchange.shuffleOrigin(), exchange.advisoryPartitionSize(),
              // AQE plans a shuffle stage with its exchange at the root and asks for rows there.
              node == plan)
          : null);
    });
  }

  @Override
  public Rule<SparkPlan> postColumnarTransitions() {
    return new PlanRule("ThallusShuffleExchangeInput", plan -> transformUp(plan, node -> {
      if (node instanceof ThallusShuffleExchangeExec exchange) {
        SparkPlan input = exchange.child();
        if (input instanceof RowToColumnarExec toColumns) {
          return exchange.withNewChildInternal(toColumns.child());
        }
        if (input instanceof ColumnarToRowExec toRows && toRows.child().supportsColumnar()) {
          return exchange.withNewChildInternal(toRows.child());
        }
      }
      return null;
    }));
  }

  /** {@code plan.transformUp}, with a rule that answers null where it does not apply. */
  static SparkPlan transformUp(SparkPlan plan, UnaryOperator<SparkPlan> rule) {
    return (SparkPlan) plan.transformUp(new AbstractPartialFunction<SparkPlan, SparkPlan>() {
      @Override
      public boolean isDefinedAt(SparkPlan node) {
        return rule.apply(node) != null;
      }

      @Override
      public <A1 extends SparkPlan, B1> B1 applyOrElse(A1 node, Function1<A1, B1> otherwise) {
        SparkPlan rewritten = rule.apply(node);
        @SuppressWarnings("unchecked")
        B1 result = rewritten != null ? (B1) rewritten : otherwise.apply(node);
        return result;
      }
    });
  }

  private static final class PlanRule extends Rule<SparkPlan> {
    private final String name;
    private final UnaryOperator<SparkPlan> body;

    PlanRule(String name, UnaryOperator<SparkPlan> body) {
      this.name = name;
      this.body = body;
    }

    @Override
    public String ruleName() {
      return name;
    }

    @Override
    public SparkPlan apply(SparkPlan plan) {
      return body.apply(plan);
    }
  }
}
