package io.thallus.spark.shuffle;

import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.apache.spark.SparkContext;
import org.apache.spark.SparkEnv;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Decides on the driver, when a shuffle's dependency is built, whether the exchange store's map tasks push, and to
 * whom: {@link ShuffleOptions#EXCHANGE_PUSH} ({@code auto} pushes a shuffle whose estimated size is at most
 * {@link ShuffleOptions#EXCHANGE_PUSH_MAX_BYTES}), among the executors alive now that registered an endpoint.
 */
final class PushPlanner {
  private PushPlanner() {}

  /** The shuffle's push plan, or null: its reducers pull. */
  static PushPlan plan(ShuffleConf options, SparkContext context, int partitions, OptionalLong estimatedBytes) {
    PushMode mode = options.pushMode();
    if (mode == PushMode.OFF || partitions < 2) {
      return null;
    }
    if (mode == PushMode.AUTO
        && (estimatedBytes.isEmpty() || estimatedBytes.getAsLong() > options.pushMaxBytes())) {
      return null;
    }
    Optional<ExchangeDirectory> directory = SparkEnv.get() != null
        && SparkEnv.get().shuffleManager() instanceof ThallusShuffleManager manager
        ? manager.directory() : Optional.empty();
    if (directory.isEmpty()) {
      return null;
    }
    List<ExecutorEndpoint> live = directory.get().live(CollectionConverters.asJava(context.getExecutorIds()));
    // With one executor every partition is its own: nothing would leave it.
    if (live.size() < 2) {
      return null;
    }
    return new PushPlan(live, partitions, options.pushCommitWait().toMillis());
  }
}
