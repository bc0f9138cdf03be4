package io.thallus.spark.shuffle;

import java.io.IOException;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.spark.TaskContext;
import org.apache.spark.scheduler.MapStatus;
import org.apache.spark.scheduler.MapStatus$;
import org.apache.spark.shuffle.ShuffleWriteMetricsReporter;
import org.apache.spark.shuffle.ShuffleWriter;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.util.ArrowUtils;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import scala.Option;
import scala.Product2;
import scala.collection.Iterator;

/**
 * A map task of a Thallus exchange: each input row is appended to the Arrow batch of its reduce partition, and each
 * input batch is scattered into them column by column ({@link PartitionedBatchBuilder}); at the end, the frames go to
 * the store and the MapStatus reports their true sizes.
 */
final class ArrowShuffleWriter extends ShuffleWriter<Object, Object> {
  private final ThallusShuffleHandle handle;
  private final long mapId;
  private final TaskContext context;
  private final ShuffleWriteMetricsReporter metrics;
  private final ShuffleStore store;
  private MapStatus status;
  private long[] partitionLengths = new long[0];

  ArrowShuffleWriter(ThallusShuffleHandle handle, long mapId, TaskContext context,
      ShuffleWriteMetricsReporter metrics, ShuffleStore store) {
    this.handle = handle;
    this.mapId = mapId;
    this.context = context;
    this.metrics = metrics;
    this.store = store;
  }

  @Override
  @SuppressWarnings({"rawtypes"})
  public void write(Iterator<Product2<Object, Object>> records) throws IOException {
    ArrowShuffleDependency dependency = handle.arrowDependency();
    ExchangeLayout layout = dependency.layout();
    RowPartitionIds partitionIds = layout.partitionIds(context.partitionId());
    // The records are the child's rows or batches as they come (see ArrowShuffleDependency): read them untyped.
    Iterator input = records;
    try (BufferAllocator allocator = ArrowUtils.rootAllocator().newChildAllocator(
            "thallus-shuffle-map-" + handle.shuffleId() + "-" + mapId, 0, Long.MAX_VALUE);
         ShuffleStore.MapOutputSink sink = store.openMapOutput(handle.shuffleId(), mapId, dependency);
         PartitionedBatchBuilder builder = new PartitionedBatchBuilder(layout, partitionIds, allocator, sink)) {
      long started = System.nanoTime();
      while (input.hasNext()) {
        Object next = input.next();
        if (next instanceof ColumnarBatch batch) {
          builder.append(batch);
        } else {
          builder.append((InternalRow) next);
        }
      }
      builder.finish();
      long converted = System.nanoTime();
      partitionLengths = sink.commit();
      metrics.incWriteTime(System.nanoTime() - converted);
      // The loop's time includes the child's own (rows are pulled through it): the figure is an upper bound.
      dependency.metrics().convertTime.add(converted - started - builder.encodeNanos());
      dependency.metrics().encodeTime.add(builder.encodeNanos());
      long stored = 0;
      for (long length : partitionLengths) {
        stored += length;
      }
      metrics.incBytesWritten(stored);
      metrics.incRecordsWritten(builder.rows());
      dependency.metrics().dataSize.add(builder.rawBytes());
    }
    status = MapStatus$.MODULE$.apply(
        store.location(), partitionLengths, mapId, MapStatus$.MODULE$.apply$default$4());
  }

  @Override
  public Option<MapStatus> stop(boolean success) {
    return success && status != null ? Option.apply(status) : Option.empty();
  }

  @Override
  public long[] getPartitionLengths() {
    return partitionLengths;
  }
}
