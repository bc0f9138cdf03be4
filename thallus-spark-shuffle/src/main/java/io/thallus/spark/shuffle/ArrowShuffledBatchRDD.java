package io.thallus.spark.shuffle;

import java.util.List;
import org.apache.spark.Dependency;
import org.apache.spark.MapOutputTrackerMaster;
import org.apache.spark.Partition;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.execution.CoalescedMapperPartitionSpec;
import org.apache.spark.sql.execution.CoalescedPartitionSpec;
import org.apache.spark.sql.execution.PartialMapperPartitionSpec;
import org.apache.spark.sql.execution.PartialReducerPartitionSpec;
import org.apache.spark.sql.execution.ShufflePartitionSpec;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.execution.metric.SQLShuffleReadMetricsReporter;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import scala.collection.Iterator;
import scala.collection.immutable.Map;
import scala.collection.immutable.Seq;
import scala.reflect.ClassTag$;

/**
 * The reduce side of a Thallus exchange as an RDD of Arrow batches, one partition per {@link ShufflePartitionSpec}:
 * whole reduce partitions or runs of them (AQE's coalescing), part of the map outputs of one reduce partition (a
 * skewed join's split), or part of the reduce partitions of some map outputs (AQE's local read).
 */
final class ArrowShuffledBatchRDD extends RDD<ColumnarBatch> {
  private static final long serialVersionUID = 1L;

  private final ArrowShuffleDependency dependency;
  private final Map<String, SQLMetric> readMetrics;
  private final ShufflePartitionSpec[] specs;

  ArrowShuffledBatchRDD(ArrowShuffleDependency dependency, Map<String, SQLMetric> readMetrics,
      ShufflePartitionSpec[] specs) {
    super(dependency.rdd().context(),
        scala.jdk.javaapi.CollectionConverters.<Dependency<?>>asScala(List.<Dependency<?>>of(dependency)).toList(),
        ClassTag$.MODULE$.apply(ColumnarBatch.class));
    this.dependency = dependency;
    this.readMetrics = readMetrics;
    this.specs = specs.clone();
  }

  /** Every reduce partition as one partition of the RDD: Spark's plan without AQE. */
  static ShufflePartitionSpec[] wholePartitions(int count) {
    ShufflePartitionSpec[] specs = new ShufflePartitionSpec[count];
    for (int i = 0; i < count; i++) {
      specs[i] = new CoalescedPartitionSpec(i, i + 1, scala.Option.empty());
    }
    return specs;
  }

  @Override
  public Partition[] getPartitions() {
    Partition[] partitions = new Partition[specs.length];
    for (int i = 0; i < specs.length; i++) {
      partitions[i] = new SpecPartition(i, specs[i]);
    }
    return partitions;
  }

  @Override
  public Seq<String> getPreferredLocations(Partition partition) {
    MapOutputTrackerMaster tracker = (MapOutputTrackerMaster) SparkEnv.get().mapOutputTracker();
    ShufflePartitionSpec spec = ((SpecPartition) partition).spec;
    PushPlan push = dependency.pushPlan();
    if (push != null && spec instanceof CoalescedPartitionSpec c) {
      // Pushed: the executor the range's partitions were pushed to (most of them, for a range across two), so the
      // reducer reads them there without a pull. Elsewhere it would pull them from the maps, which keep them.
      java.util.Optional<ExecutorEndpoint> holder = push.holderOf(c.startReducerIndex(), c.endReducerIndex());
      if (holder.isPresent()) {
        return scala.jdk.javaapi.CollectionConverters.asScala(List.of(holder.get().taskLocation())).toList();
      }
    }
    if (spec instanceof CoalescedPartitionSpec c) {
      // As Spark's own reader: the hosts holding most of a single reduce partition; none for a coalesced run.
      return c.endReducerIndex() - c.startReducerIndex() == 1
          ? tracker.getPreferredLocationsForShuffle(dependency, c.startReducerIndex())
          : scala.collection.immutable.List$.MODULE$.empty();
    } else if (spec instanceof PartialReducerPartitionSpec p) {
      return tracker.getMapLocation(dependency, p.startMapIndex(), p.endMapIndex());
    } else if (spec instanceof PartialMapperPartitionSpec p) {
      return tracker.getMapLocation(dependency, p.mapIndex(), p.mapIndex() + 1);
    } else if (spec instanceof CoalescedMapperPartitionSpec p) {
      return tracker.getMapLocation(dependency, p.startMapIndex(), p.endMapIndex());
    }
    throw new IllegalStateException("Unknown shuffle partition spec " + spec);
  }

  @Override
  public Iterator<ColumnarBatch> compute(Partition partition, TaskContext context) {
    SQLShuffleReadMetricsReporter metrics = new SQLShuffleReadMetricsReporter(
        context.taskMetrics().createTempShuffleReadMetrics(), readMetrics);
    ShufflePartitionSpec spec = ((SpecPartition) partition).spec;
    int startMap;
    int endMap;
    int startReducer;
    int endReducer;
    if (spec instanceof CoalescedPartitionSpec c) {
      startMap = 0;
      endMap = Integer.MAX_VALUE;
      startReducer = c.startReducerIndex();
      endReducer = c.endReducerIndex();
    } else if (spec instanceof PartialReducerPartitionSpec p) {
      startMap = p.startMapIndex();
      endMap = p.endMapIndex();
      startReducer = p.reducerIndex();
      endReducer = p.reducerIndex() + 1;
    } else if (spec instanceof PartialMapperPartitionSpec p) {
      startMap = p.mapIndex();
      endMap = p.mapIndex() + 1;
      startReducer = p.startReducerIndex();
      endReducer = p.endReducerIndex();
    } else if (spec instanceof CoalescedMapperPartitionSpec p) {
      startMap = p.startMapIndex();
      endMap = p.endMapIndex();
      startReducer = 0;
      endReducer = p.numReducers();
    } else {
      throw new IllegalStateException("Unknown shuffle partition spec " + spec);
    }
    ArrowShuffleReader reader = (ArrowShuffleReader) SparkEnv.get().shuffleManager().<Object, Object>getReader(
        dependency.shuffleHandle(), startMap, endMap, startReducer, endReducer, context, metrics);
    return reader.batches();
  }

  private static final class SpecPartition implements Partition {
    private static final long serialVersionUID = 1L;
    private final int index;
    private final ShufflePartitionSpec spec;

    SpecPartition(int index, ShufflePartitionSpec spec) {
      this.index = index;
      this.spec = spec;
    }

    @Override
    public int index() {
      return index;
    }

    @Override
    public int hashCode() {
      return index;
    }

    @Override
    public boolean equals(Object other) {
      return this == other;
    }
  }
}
