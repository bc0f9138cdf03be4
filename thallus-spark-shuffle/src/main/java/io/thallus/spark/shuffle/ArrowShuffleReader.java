package io.thallus.spark.shuffle;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.NoSuchElementException;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.InterruptibleIterator;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.ShuffleReader;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.util.ArrowUtils;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import scala.Product2;
import scala.collection.AbstractIterator;
import scala.collection.Iterator;

/**
 * A reduce task's input from a Thallus exchange: its map outputs' batches, from the store, as Spark's columnar
 * batches. Each batch is valid until the next is asked for, as Spark's columnar scans.
 */
final class ArrowShuffleReader implements ShuffleReader<Object, Object> {
  /** The task-local property Spark SQL sets where contiguous blocks may be fetched as one. */
  private static final String FETCH_IN_BATCH = "__fetch_continuous_blocks_in_batch_enabled";

  private final ThallusShuffleHandle handle;
  private final int startMapIndex;
  private final int endMapIndex;
  private final int startPartition;
  private final int endPartition;
  private final TaskContext context;
  private final ShuffleReadMetricsReporter metrics;
  private final ShuffleStore store;

  ArrowShuffleReader(ThallusShuffleHandle handle, int startMapIndex, int endMapIndex, int startPartition,
      int endPartition, TaskContext context, ShuffleReadMetricsReporter metrics, ShuffleStore store) {
    this.handle = handle;
    this.startMapIndex = startMapIndex;
    this.endMapIndex = endMapIndex;
    this.startPartition = startPartition;
    this.endPartition = endPartition;
    this.context = context;
    this.metrics = metrics;
    this.store = store;
  }

  /** The batches, typed: what {@link ArrowShuffledBatchRDD} reads. */
  Iterator<ColumnarBatch> batches() {
    var locations = SparkEnv.get().mapOutputTracker().getMapSizesByExecutorId(
        handle.shuffleId(), startMapIndex, endMapIndex, startPartition, endPartition);
    boolean atOnce = endPartition - startPartition > 1 && "true".equals(context.getLocalProperty(FETCH_IN_BATCH));
    ExchangeLayout layout = handle.arrowDependency().layout();
    BufferAllocator allocator = ArrowUtils.rootAllocator().newChildAllocator(
        "thallus-shuffle-reduce-" + handle.shuffleId() + "-" + context.taskAttemptId(), 0, Long.MAX_VALUE);
    ShuffleStore.BatchSource source;
    try {
      source = store.openReduceInput(scala.jdk.javaapi.CollectionConverters.asJava(locations), atOnce,
          handle.arrowDependency(), allocator, context, metrics);
    } catch (RuntimeException | Error e) {
      allocator.close();
      throw e;
    }
    Batches batches = new Batches(source, layout, allocator, metrics, handle.arrowDependency().metrics().decodeTime);
    context.addTaskCompletionListener(new org.apache.spark.util.TaskCompletionListener() {
      @Override
      public void onTaskCompletion(TaskContext ignored) {
        batches.close();
      }
    });
    return new InterruptibleIterator<>(context, batches);
  }

  @Override
  @SuppressWarnings({"unchecked", "rawtypes"})
  public Iterator<Product2<Object, Object>> read() {
    // Spark's ShuffleReader contract is typed as pairs; this shuffle's only reader reads batches (see batches()).
    return (Iterator) batches();
  }

  /** The store's batches as Spark's, with the read metrics. */
  private static final class Batches extends AbstractIterator<ColumnarBatch> implements AutoCloseable {
    private final ShuffleStore.BatchSource source;
    private final ExchangeLayout layout;
    private final BufferAllocator allocator;
    private final ShuffleReadMetricsReporter metrics;
    private final SQLMetric decodeTime;
    private VectorSchemaRoot root;
    private ColumnarBatch batch;
    private boolean loaded;
    private boolean closed;

    Batches(ShuffleStore.BatchSource source, ExchangeLayout layout, BufferAllocator allocator,
        ShuffleReadMetricsReporter metrics, SQLMetric decodeTime) {
      this.source = source;
      this.layout = layout;
      this.allocator = allocator;
      this.metrics = metrics;
      this.decodeTime = decodeTime;
    }

    @Override
    public boolean hasNext() {
      if (loaded) {
        return true;
      }
      if (closed) {
        return false;
      }
      VectorSchemaRoot next;
      // The time includes waiting for a block still on its way (Spark's fetch wait counts that part).
      long started = System.nanoTime();
      try {
        next = source.next();
      } catch (IOException e) {
        throw new UncheckedIOException("Reading a Thallus shuffle block failed", e);
      } finally {
        decodeTime.add(System.nanoTime() - started);
      }
      if (next == null) {
        close();
        return false;
      }
      if (next != root) {
        // A store may hand out the same root each time (Spark's) or another one: wrap each root once.
        root = next;
        batch = new ColumnarBatch(layout.columns(root));
      }
      batch.setNumRows(root.getRowCount());
      metrics.incRecordsRead(root.getRowCount());
      loaded = true;
      return true;
    }

    @Override
    public ColumnarBatch next() {
      if (!hasNext()) {
        throw new NoSuchElementException();
      }
      loaded = false;
      return batch;
    }

    @Override
    public void close() {
      if (closed) {
        return;
      }
      closed = true;
      source.close();
      allocator.close();
    }
  }
}
