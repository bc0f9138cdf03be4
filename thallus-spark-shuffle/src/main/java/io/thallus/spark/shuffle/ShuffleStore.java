package io.thallus.spark.shuffle;

import java.io.IOException;
import java.util.Collection;
import java.util.Iterator;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.TaskContext;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.BlockManagerId;
import scala.Tuple2;
import scala.Tuple3;
import scala.collection.Seq;

/**
 * Where a shuffle's batches live between its map and its reduce tasks, and how a reducer gets them. The exchange
 * above it makes Arrow batches per reduce partition and reads Arrow batches back; a store moves them. The default
 * store is Spark's own block storage ({@link SparkBlockStore}, which frames and compresses them into Spark's
 * shuffle files); {@link ExchangeStore} keeps them in a Thallus exchange endpoint per executor, from which reducers
 * pull. Either way the output stays with the map task's executor, so that a lost reducer re-reads it and Spark
 * recomputes a lost map output as usual ({@link ShuffleOptions#STORE} picks one).
 */
interface ShuffleStore extends AutoCloseable {
  /** A map task's output, batch by batch (in any partition order), then committed once. */
  MapOutputSink openMapOutput(int shuffleId, long mapId, ExchangeLayout layout);

  /** A map task's output for {@code dependency}: a store that pushes reads the dependency's push plan. */
  default MapOutputSink openMapOutput(int shuffleId, long mapId, ArrowShuffleDependency dependency) {
    return openMapOutput(shuffleId, mapId, dependency.layout());
  }

  /**
   * A reduce task's batches, given where its blocks are ({@code locations}: each executor with its blocks, their
   * sizes and map indexes, as Spark's MapOutputTracker reports them). A block that cannot be fetched fails the task
   * with Spark's FetchFailedException, so that Spark recomputes the lost map output.
   */
  BatchSource openReduceInput(
      Iterator<Tuple2<BlockManagerId, Seq<Tuple3<BlockId, Object, Object>>>> locations,
      boolean fetchContiguousBlocksAtOnce, ExchangeLayout layout, BufferAllocator allocator, TaskContext context,
      ShuffleReadMetricsReporter metrics);

  /** A reduce task's batches of {@code dependency}'s shuffle (a store that pushes counts its reads in its metrics). */
  default BatchSource openReduceInput(
      Iterator<Tuple2<BlockManagerId, Seq<Tuple3<BlockId, Object, Object>>>> locations,
      boolean fetchContiguousBlocksAtOnce, ArrowShuffleDependency dependency, BufferAllocator allocator,
      TaskContext context, ShuffleReadMetricsReporter metrics) {
    return openReduceInput(locations, fetchContiguousBlocksAtOnce, dependency.layout(), allocator, context, metrics);
  }

  /** Where this executor's MapStatus points: what reducers hand back to {@link #openReduceInput} as locations. */
  BlockManagerId location();

  /** Forgets a shuffle Spark has unregistered: the map outputs this executor wrote ({@code mapIds}), files and buffers. */
  void removeShuffle(int shuffleId, Collection<Long> mapIds);

  /** Frees what the store holds when the shuffle manager stops. */
  @Override
  void close();

  /** One map task's output on its way into the store. */
  interface MapOutputSink extends AutoCloseable {
    /** Takes {@code batch}'s rows for {@code partition}; the caller may reuse the batch when this returns. */
    void add(int partition, VectorSchemaRoot batch) throws IOException;

    /** Stores the output and returns each reduce partition's stored length, for the task's MapStatus. */
    long[] commit() throws IOException;

    /** Arrow bytes taken (before compression): AQE's data size. */
    long rawBytes();

    /** Time spent encoding and compressing in {@link #add}. */
    long encodeNanos();

    @Override
    void close();
  }

  /** A reduce task's batches from the store. */
  interface BatchSource extends AutoCloseable {
    /** The next batch, valid until the next call, or null at the end. */
    VectorSchemaRoot next() throws IOException;

    @Override
    void close();
  }
}
