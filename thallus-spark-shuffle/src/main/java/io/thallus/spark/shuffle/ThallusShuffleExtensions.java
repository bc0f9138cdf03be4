package io.thallus.spark.shuffle;

import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.execution.ColumnarRule;
import scala.runtime.AbstractFunction1;
import scala.runtime.BoxedUnit;

/**
 * Puts the Thallus exchange in the place of Spark's shuffle exchange, for sessions that name this class and run
 * with {@link ThallusShuffleManager}:
 *
 * <pre>{@code
 * spark.sql.extensions  = io.thallus.spark.shuffle.ThallusShuffleExtensions
 * spark.shuffle.manager = io.thallus.spark.shuffle.ThallusShuffleManager
 * }</pre>
 *
 * Spark's exchange stays where the Thallus exchange does not take it: other shuffle managers, round-robin and range
 * partitioning, nested or interval types (see docs/shuffle.md).
 */
public final class ThallusShuffleExtensions extends AbstractFunction1<SparkSessionExtensions, BoxedUnit> {
  public ThallusShuffleExtensions() {}

  @Override
  public BoxedUnit apply(SparkSessionExtensions extensions) {
    extensions.injectColumnar(new AbstractFunction1<SparkSession, ColumnarRule>() {
      @Override
      public ColumnarRule apply(SparkSession session) {
        // The session's conf is read when the rules run: the session state is being built here.
        return new ExchangeRules();
      }
    });
    return BoxedUnit.UNIT;
  }
}
