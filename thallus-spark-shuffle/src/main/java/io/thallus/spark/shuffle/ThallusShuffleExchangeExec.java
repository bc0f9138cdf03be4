package io.thallus.spark.shuffle;

import java.io.Serializable;
import java.util.HashMap;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.spark.FutureAction;
import org.apache.spark.MapOutputStatistics;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection$;
import org.apache.spark.sql.catalyst.plans.logical.Statistics;
import org.apache.spark.sql.catalyst.plans.logical.Statistics$;
import org.apache.spark.sql.catalyst.plans.physical.Partitioning;
import org.apache.spark.sql.execution.ShufflePartitionSpec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.UnsafeRowSerializer;
import org.apache.spark.sql.execution.exchange.Exchange;
import org.apache.spark.sql.execution.exchange.ShuffleExchangeExec;
import org.apache.spark.sql.execution.exchange.ShuffleExchangeLike;
import org.apache.spark.sql.execution.exchange.ShuffleOrigin;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.execution.metric.SQLMetrics;
import org.apache.spark.sql.execution.metric.SQLShuffleReadMetricsReporter$;
import org.apache.spark.sql.execution.metric.SQLShuffleWriteMetricsReporter$;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import scala.Option;
import scala.collection.Iterator;
import scala.collection.immutable.Map;
import scala.concurrent.Future;
import scala.concurrent.Promise;
import scala.jdk.javaapi.CollectionConverters;
import scala.math.BigInt;
import scala.reflect.ClassTag$;

/**
 * The Thallus exchange: Spark's {@code Exchange} node for hash, range and single partitioning, moving Arrow batches. Its map
 * side takes the child's rows (or batches) as they come and writes Arrow frames per reduce partition; its reduce side
 * yields {@link ColumnarBatch}es of {@code ArrowColumnVector}s. Partition ids are Spark's own ({@link PartitionIds}),
 * so either side of a join may be Spark's exchange.
 *
 * <p>Placed by {@link ThallusShuffleExtensions}; it is a {@link ShuffleExchangeLike}, so AQE makes it a query stage,
 * coalesces and splits its partitions ({@link #getShuffleRDD}) and reads its statistics.
 *
 * <p>{@code rowBased}: Spark's AQE plans a shuffle stage with its exchange at the root and asks for rows there; such
 * an exchange says it gives rows too (one conversion, in {@link #doExecute}), where another gives batches only and
 * Spark puts its ColumnarToRow above it.
 */
public final class ThallusShuffleExchangeExec extends Exchange implements ShuffleExchangeLike {
  private static final long serialVersionUID = 1L;
  private static final String DATA_SIZE = ExchangeMetrics.DATA_SIZE;

  private final Partitioning outputPartitioning;
  private final SparkPlan child;
  private final ShuffleOrigin shuffleOrigin;
  private final Option<Object> advisoryPartitionSize;
  private final boolean rowBased;

  // ShuffleExchangeLike's state (lazy vals and vars in Scala), kept here as Scala would in a case class.
  private transient Promise<MapOutputStatistics> promise;
  private transient Future<MapOutputStatistics> completionFuture;
  private transient AtomicReference<Option<FutureAction<MapOutputStatistics>>> futureAction;
  private transient boolean cancelled;
  private transient java.util.concurrent.Future<Object> triggerFuture;

  private transient Map<String, SQLMetric> writeMetrics;
  private transient Map<String, SQLMetric> readMetrics;
  private transient Map<String, SQLMetric> metrics;
  private transient ExchangeMetrics exchangeMetrics;
  private transient ArrowShuffleDependency dependency;
  private transient Future<MapOutputStatistics> mapOutputStatistics;
  private transient RDD<ColumnarBatch> wholeShuffle;

  static ThallusShuffleExchangeExec create(Partitioning outputPartitioning, SparkPlan child,
      ShuffleOrigin shuffleOrigin, Option<Object> advisoryPartitionSize, boolean rowBased) {
    return new ThallusShuffleExchangeExec(outputPartitioning, child, shuffleOrigin, advisoryPartitionSize, rowBased);
  }

  /** Spark's tree copies call this constructor with the product's elements, in order. */
  public ThallusShuffleExchangeExec(Partitioning outputPartitioning, SparkPlan child, ShuffleOrigin shuffleOrigin,
      Option<Object> advisoryPartitionSize, boolean rowBased) {
    this.outputPartitioning = outputPartitioning;
    this.child = child;
    this.shuffleOrigin = shuffleOrigin;
    this.advisoryPartitionSize = advisoryPartitionSize;
    this.rowBased = rowBased;
    ShuffleExchangeLike.$init$(this);
  }

  // ---- the node

  @Override
  public String nodeName() {
    return "ThallusShuffleExchange";
  }

  @Override
  public SparkPlan child() {
    return child;
  }

  @Override
  public scala.collection.immutable.Seq<org.apache.spark.sql.catalyst.expressions.Attribute> output() {
    return child.output();
  }

  @Override
  public Partitioning outputPartitioning() {
    return outputPartitioning;
  }

  @Override
  public boolean supportsColumnar() {
    return true;
  }

  @Override
  public boolean supportsRowBased() {
    return rowBased;
  }

  @Override
  public ThallusShuffleExchangeExec withNewChildInternal(SparkPlan newChild) {
    return create(outputPartitioning, newChild, shuffleOrigin, advisoryPartitionSize, rowBased);
  }

  /** The same exchange, asked for rows or not (see the class comment). */
  ThallusShuffleExchangeExec withRowBased(boolean rows) {
    return create(outputPartitioning, child, shuffleOrigin, advisoryPartitionSize, rows);
  }

  @Override
  public synchronized Map<String, SQLMetric> metrics() {
    if (metrics == null) {
      exchangeMetrics = new ExchangeMetrics(sparkContext());
      java.util.Map<String, SQLMetric> all = new HashMap<>(exchangeMetrics.byName());
      all.putAll(CollectionConverters.asJava(readMetrics()));
      all.putAll(CollectionConverters.asJava(writeMetrics()));
      metrics = Map.from(CollectionConverters.asScala(all));
    }
    return metrics;
  }

  private synchronized ExchangeMetrics exchangeMetrics() {
    metrics();
    return exchangeMetrics;
  }

  private synchronized Map<String, SQLMetric> writeMetrics() {
    if (writeMetrics == null) {
      writeMetrics = SQLShuffleWriteMetricsReporter$.MODULE$.createShuffleWriteMetrics(sparkContext());
    }
    return writeMetrics;
  }

  private synchronized Map<String, SQLMetric> readMetrics() {
    if (readMetrics == null) {
      readMetrics = SQLShuffleReadMetricsReporter$.MODULE$.createShuffleReadMetrics(sparkContext());
    }
    return readMetrics;
  }

  /** The shuffle's dependency, made once: running it is what makes the map stage. */
  synchronized ArrowShuffleDependency shuffleDependency() {
    if (dependency == null) {
      boolean columnarInput = child.supportsColumnar();
      RDD<?> input = columnarInput ? child.executeColumnar() : child.execute();
      Expression partitionId = PartitionIds.of(outputPartitioning, input, columnarInput, child.output());
      ShuffleConf options = new ShuffleConf(conf());
      ExchangeLayout layout = new ExchangeLayout(child.output(), partitionId, outputPartitioning.numPartitions(),
          columnarInput, options.codec(), options.batchRows());
      PushPlan push = PushPlanner.plan(options, sparkContext(), outputPartitioning.numPartitions(), estimatedBytes());
      dependency = new ArrowShuffleDependency(input, layout, new UnsafeRowSerializer(child.output().size(), null),
          ShuffleExchangeExec.createShuffleWriteProcessor(writeMetrics()), exchangeMetrics(), push);
    }
    return dependency;
  }

  /**
   * Spark's estimate of the child's output size: the statistics of the logical plan of the topmost node under the
   * exchange that has one (nodes Spark adds after planning, such as whole-stage code generation, have none).
   */
  private OptionalLong estimatedBytes() {
    java.util.ArrayDeque<SparkPlan> nodes = new java.util.ArrayDeque<>(List.of(child));
    Option<org.apache.spark.sql.catalyst.plans.logical.LogicalPlan> logical = Option.empty();
    while (logical.isEmpty() && !nodes.isEmpty()) {
      SparkPlan node = nodes.poll();
      logical = node.logicalLink();
      nodes.addAll(CollectionConverters.asJava(node.children()));
    }
    if (logical.isEmpty()) {
      return OptionalLong.empty();
    }
    BigInt size = logical.get().stats().sizeInBytes();
    return size.isValidLong() && size.longValue() < Long.MAX_VALUE ? OptionalLong.of(size.longValue())
        : OptionalLong.empty();
  }

  @Override
  public RDD<InternalRow> doExecute() {
    // One conversion to rows, as Spark's ColumnarToRow makes them (UnsafeRow: what row operators expect).
    return doExecuteColumnar().mapPartitionsInternal(new BatchesToRows(shuffleDependency().layout().types()), false,
        ClassTag$.MODULE$.apply(InternalRow.class));
  }

  @Override
  public synchronized RDD<ColumnarBatch> doExecuteColumnar() {
    if (wholeShuffle == null) {
      wholeShuffle = new ArrowShuffledBatchRDD(shuffleDependency(), readMetrics(),
          ArrowShuffledBatchRDD.wholePartitions(outputPartitioning.numPartitions()));
    }
    return wholeShuffle;
  }

  // ---- ShuffleExchangeLike

  @Override
  public int numMappers() {
    return shuffleDependency().rdd().getNumPartitions();
  }

  @Override
  public int numPartitions() {
    return shuffleDependency().partitioner().numPartitions();
  }

  @Override
  public Option<Object> advisoryPartitionSize() {
    return advisoryPartitionSize;
  }

  @Override
  public ShuffleOrigin shuffleOrigin() {
    return shuffleOrigin;
  }

  @Override
  public int shuffleId() {
    return shuffleDependency().shuffleId();
  }

  @Override
  public synchronized Future<MapOutputStatistics> mapOutputStatisticsFuture() {
    if (mapOutputStatistics == null) {
      ArrowShuffleDependency dep = shuffleDependency();
      mapOutputStatistics = dep.rdd().getNumPartitions() == 0
          ? Future.successful(null)
          : sparkContext().submitMapStage(dep);
    }
    return mapOutputStatistics;
  }

  @Override
  public RDD<?> getShuffleRDD(ShufflePartitionSpec[] partitionSpecs) {
    return new ArrowShuffledBatchRDD(shuffleDependency(), readMetrics(), partitionSpecs);
  }

  @Override
  public Statistics runtimeStatistics() {
    long dataSize = metrics().apply(DATA_SIZE).value();
    long rows = metrics().apply(SQLShuffleWriteMetricsReporter$.MODULE$.SHUFFLE_RECORDS_WRITTEN()).value();
    return new Statistics(BigInt.apply(dataSize), Option.apply(BigInt.apply(rows)),
        Statistics$.MODULE$.apply$default$3(), Statistics$.MODULE$.apply$default$4());
  }

  @Override
  public synchronized Promise<MapOutputStatistics> org$apache$spark$sql$execution$exchange$ShuffleExchangeLike$$promise() {
    if (promise == null) {
      promise = ShuffleExchangeLike.super.org$apache$spark$sql$execution$exchange$ShuffleExchangeLike$$promise();
    }
    return promise;
  }

  @Override
  public synchronized Future<MapOutputStatistics>
      org$apache$spark$sql$execution$exchange$ShuffleExchangeLike$$completionFuture() {
    if (completionFuture == null) {
      completionFuture =
          ShuffleExchangeLike.super.org$apache$spark$sql$execution$exchange$ShuffleExchangeLike$$completionFuture();
    }
    return completionFuture;
  }

  @Override
  public synchronized java.util.concurrent.Future<Object>
      org$apache$spark$sql$execution$exchange$ShuffleExchangeLike$$triggerFuture() {
    if (triggerFuture == null) {
      triggerFuture =
          ShuffleExchangeLike.super.org$apache$spark$sql$execution$exchange$ShuffleExchangeLike$$triggerFuture();
    }
    return triggerFuture;
  }

  @Override
  public AtomicReference<Option<FutureAction<MapOutputStatistics>>> futureAction() {
    return futureAction;
  }

  @Override
  public void org$apache$spark$sql$execution$exchange$ShuffleExchangeLike$_setter_$futureAction_$eq(
      AtomicReference<Option<FutureAction<MapOutputStatistics>>> value) {
    futureAction = value;
  }

  @Override
  public boolean org$apache$spark$sql$execution$exchange$ShuffleExchangeLike$$isCancelled() {
    return cancelled;
  }

  @Override
  public void org$apache$spark$sql$execution$exchange$ShuffleExchangeLike$$isCancelled_$eq(boolean value) {
    cancelled = value;
  }

  // ---- Product, for Spark's tree copies (makeCopy calls the constructor with these, in order)

  @Override
  public int productArity() {
    return 5;
  }

  @Override
  public Object productElement(int n) {
    return switch (n) {
      case 0 -> outputPartitioning;
      case 1 -> child;
      case 2 -> shuffleOrigin;
      case 3 -> advisoryPartitionSize;
      case 4 -> rowBased;
      default -> throw new IndexOutOfBoundsException(n);
    };
  }

  @Override
  public boolean canEqual(Object other) {
    return other instanceof ThallusShuffleExchangeExec;
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof ThallusShuffleExchangeExec that
        && outputPartitioning.equals(that.outputPartitioning) && child.equals(that.child)
        && shuffleOrigin.equals(that.shuffleOrigin) && advisoryPartitionSize.equals(that.advisoryPartitionSize)
        && rowBased == that.rowBased;
  }

  @Override
  public int hashCode() {
    return Objects.hash(outputPartitioning, child, shuffleOrigin, advisoryPartitionSize, rowBased);
  }

  /** Batches to UnsafeRows, per task (the projection is made on the executor). */
  private static final class BatchesToRows
      extends scala.runtime.AbstractFunction1<Iterator<ColumnarBatch>, Iterator<InternalRow>> implements Serializable {
    private static final long serialVersionUID = 1L;
    private final org.apache.spark.sql.types.DataType[] types;

    BatchesToRows(org.apache.spark.sql.types.DataType[] types) {
      this.types = types;
    }

    @Override
    public Iterator<InternalRow> apply(Iterator<ColumnarBatch> batches) {
      UnsafeProjection toUnsafe = UnsafeProjection$.MODULE$.create(types);
      return batches.flatMap(batch -> CollectionConverters.asScala(batch.rowIterator()).map(toUnsafe::apply));
    }
  }
}
