package io.thallus.spark.shuffle;

import java.io.IOException;
import java.io.InputStream;
import java.util.Iterator;
import org.apache.spark.TaskContext;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.BlockManagerId;
import scala.Tuple2;
import scala.Tuple3;
import scala.collection.Seq;

/**
 * Where a shuffle's frames live between its map and its reduce tasks, and how a reducer gets them. The exchange
 * above it only makes and reads frames ({@link BatchFrames}); a store moves bytes. The first store is Spark's own
 * block storage ({@link SparkBlockStore}); a store that pushes frames to the reducers' executors as they are made
 * keeps that one underneath as the copy that outlives a lost reducer.
 */
interface ShuffleStore {
  /**
   * Stores one map task's output: for each reduce partition in order, its frames (null where none). Returns the
   * stored length of each partition, which the map task reports in its MapStatus.
   */
  long[] writeMapOutput(int shuffleId, long mapId, GrowableBytes[] partitionFrames) throws IOException;

  /**
   * The frame streams of a reduce task's blocks, given where they are ({@code locations}: each executor with its
   * blocks, their sizes and map indexes, as Spark's MapOutputTracker reports them). A block that cannot be fetched
   * fails the task with Spark's FetchFailedException, so that Spark recomputes the lost map output.
   */
  Iterator<InputStream> openReduceInput(
      Iterator<Tuple2<BlockManagerId, Seq<Tuple3<BlockId, Object, Object>>>> locations,
      boolean fetchContiguousBlocksAtOnce, TaskContext context, ShuffleReadMetricsReporter metrics);

  /** Forgets a map output of a shuffle Spark has unregistered (its files, its buffers). */
  void removeMapOutput(int shuffleId, long mapId);
}
