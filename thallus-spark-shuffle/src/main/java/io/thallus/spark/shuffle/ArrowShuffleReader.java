package io.thallus.spark.shuffle;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.NoSuchElementException;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.spark.InterruptibleIterator;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.ShuffleReader;
import org.apache.spark.sql.util.ArrowUtils;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import scala.Product2;
import scala.collection.AbstractIterator;
import scala.collection.Iterator;

/**
 * A reduce task's input from a Thallus exchange: the blocks of its map outputs, fetched by the store, decoded frame
 * by frame into one reused Arrow batch. Each batch is valid until the next is asked for, as Spark's columnar scans.
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
    java.util.Iterator<InputStream> streams = store.openReduceInput(
        scala.jdk.javaapi.CollectionConverters.asJava(locations), atOnce, context, metrics);
    BufferAllocator allocator = ArrowUtils.rootAllocator().newChildAllocator(
        "thallus-shuffle-reduce-" + handle.shuffleId() + "-" + context.taskAttemptId(), 0, Long.MAX_VALUE);
    Batches batches = new Batches(streams, handle.arrowDependency().layout(), allocator, metrics,
        handle.arrowDependency().metrics().decodeTime);
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

  /** Decodes frames from one stream after another into one root. */
  private static final class Batches extends AbstractIterator<ColumnarBatch> implements AutoCloseable {
    private final java.util.Iterator<InputStream> streams;
    private final BufferAllocator allocator;
    private final ShuffleReadMetricsReporter metrics;
    private final org.apache.spark.sql.execution.metric.SQLMetric decodeTime;
    private final BatchFrames.Decoder decoder;
    private final VectorSchemaRoot root;
    private final VectorLoader loader;
    private final ColumnarBatch batch;
    private DataInputStream current;
    private boolean loaded;
    private boolean closed;

    Batches(java.util.Iterator<InputStream> streams, ExchangeLayout layout, BufferAllocator allocator,
        ShuffleReadMetricsReporter metrics, org.apache.spark.sql.execution.metric.SQLMetric decodeTime) {
      this.streams = streams;
      this.decodeTime = decodeTime;
      this.allocator = allocator;
      this.metrics = metrics;
      this.decoder = new BatchFrames.Decoder(allocator);
      this.root = VectorSchemaRoot.create(layout.arrowSchema(), allocator);
      this.loader = new VectorLoader(root);
      this.batch = new ColumnarBatch(layout.columns(root));
    }

    @Override
    public boolean hasNext() {
      if (loaded) {
        return true;
      }
      if (closed) {
        return false;
      }
      try {
        while (true) {
          if (current == null) {
            if (!streams.hasNext()) {
              close();
              return false;
            }
            current = BatchFrames.Decoder.buffered(streams.next());
          }
          // The time includes waiting for a block still on its way (Spark's fetch wait counts that part).
          long started = System.nanoTime();
          ArrowRecordBatch next = decoder.next(current);
          if (next == null) {
            decodeTime.add(System.nanoTime() - started);
            current.close();
            current = null;
            continue;
          }
          try (next) {
            loader.load(next);
          }
          decodeTime.add(System.nanoTime() - started);
          batch.setNumRows(root.getRowCount());
          metrics.incRecordsRead(root.getRowCount());
          loaded = true;
          return true;
        }
      } catch (IOException e) {
        throw new UncheckedIOException("Reading a Thallus shuffle block failed", e);
      }
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
      try {
        if (current != null) {
          current.close();
        }
      } catch (IOException ignored) {
        // The fetcher releases its buffers at the task's end as well.
      }
      root.close();
      allocator.close();
    }
  }
}
