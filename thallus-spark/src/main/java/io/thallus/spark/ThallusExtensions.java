package io.thallus.spark;

import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.execution.SparkStrategy;
import scala.runtime.AbstractFunction1;
import scala.runtime.BoxedUnit;

/**
 * Whole-plan pushdown for Spark sessions that name this class:
 *
 * <pre>{@code
 * spark.sql.extensions            = io.thallus.spark.ThallusExtensions
 * spark.thallus.wholePlan.enabled = true     (the default; false leaves every plan to Spark and the scan pushdown)
 * }</pre>
 *
 * Where every leaf of a subtree of a query's plan is a Thallus scan of one server, the subtree (joins of every kind,
 * subqueries, aggregates, sorts, limits) runs as one DuckDB query on that server, computing Spark's answer; what
 * DuckDB cannot compute exactly as Spark does stays in Spark. See docs/spark.md.
 */
public final class ThallusExtensions extends AbstractFunction1<SparkSessionExtensions, BoxedUnit> {
  public ThallusExtensions() {}

  @Override
  public BoxedUnit apply(SparkSessionExtensions extensions) {
    extensions.injectPlannerStrategy(new AbstractFunction1<SparkSession, SparkStrategy>() {
      @Override
      public SparkStrategy apply(SparkSession session) {
        return new WholePlanStrategy();
      }
    });
    return BoxedUnit.UNIT;
  }
}
