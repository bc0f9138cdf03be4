package io.thallus.spark.shuffle;

import org.apache.spark.Partitioner;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.rdd.RDD;
import org.apache.spark.serializer.Serializer;
import org.apache.spark.shuffle.ShuffleWriteProcessor;
import scala.Option;
import scala.Product2;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

/**
 * The shuffle dependency of a Thallus exchange. Its RDD yields the child's rows (or columnar batches) as they come:
 * the map task's writer ({@link ArrowShuffleWriter}) finds each row's partition itself, from the layout, so rows
 * are not paired with partition ids first. Only {@link ThallusShuffleManager} can run it.
 */
final class ArrowShuffleDependency extends ShuffleDependency<Object, Object, Object> {
  private static final long serialVersionUID = 1L;
  private static final ClassTag<Object> ANY = ClassTag$.MODULE$.Any();

  private final ExchangeLayout layout;
  private final ExchangeMetrics metrics;
  private final PushPlan pushPlan;

  /** {@code pushPlan}: where the exchange store's map tasks push each partition, or null for no push. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  ArrowShuffleDependency(RDD<?> input, ExchangeLayout layout, Serializer unusedSerializer,
      ShuffleWriteProcessor writeProcessor, ExchangeMetrics metrics, PushPlan pushPlan) {
    super((RDD<? extends Product2<Object, Object>>) (RDD) input, new PartitionCount(layout.partitions()),
        unusedSerializer, Option.empty(), Option.empty(), false, writeProcessor, ANY, ANY, ANY);
    this.layout = layout;
    this.metrics = metrics;
    this.pushPlan = pushPlan;
  }

  /** Where each reduce partition is pushed, or null: the reducers pull. */
  PushPlan pushPlan() {
    return pushPlan;
  }

  ExchangeLayout layout() {
    return layout;
  }

  ExchangeMetrics metrics() {
    return metrics;
  }

  /** Only the count matters: the writer computes each row's partition from the layout. */
  static final class PartitionCount extends Partitioner {
    private static final long serialVersionUID = 1L;
    private final int partitions;

    PartitionCount(int partitions) {
      this.partitions = partitions;
    }

    @Override
    public int numPartitions() {
      return partitions;
    }

    @Override
    public int getPartition(Object key) {
      return (Integer) key;
    }
  }
}
