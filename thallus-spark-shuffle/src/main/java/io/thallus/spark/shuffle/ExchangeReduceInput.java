package io.thallus.spark.shuffle;

import io.thallus.exchange.EndpointAddress;
import io.thallus.exchange.ExchangeEndpoint;
import io.thallus.exchange.PartitionReader;
import io.thallus.exchange.ShuffleFetchException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.shuffle.FetchFailedException;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.storage.ShuffleBlockBatchId;
import org.apache.spark.storage.ShuffleBlockId;
import scala.Tuple2;
import scala.Tuple3;
import scala.collection.Seq;

/**
 * A reduce task's batches from exchange endpoints: the blocks Spark's MapOutputTracker lists (each map output's
 * non-empty reduce partitions, by the location its MapStatus gave) are grouped by reduce partition and then by
 * endpoint, and the whole task is one {@link ExchangeEndpoint#read} of all its partitions: one pull per peer endpoint
 * however many partitions AQE coalesced into the task, each partition with the maps the tracker listed for it (so
 * partial specs read just their maps). Batches come partition by partition ascending from each source (what was
 * pushed here or made here, then each peer's pull); across peers they are not merged into one order, as Spark's own
 * fetcher returns blocks as they arrive. A peer that cannot answer becomes Spark's {@link FetchFailedException},
 * naming the peer's location (its executor), so Spark unregisters that executor's map outputs and runs them again.
 */
final class ExchangeReduceInput implements ShuffleStore.BatchSource {
  /** One map output's part of a reduce partition, as the tracker named it. */
  private record MapBlock(BlockManagerId location, long mapId, int mapIndex) {}

  private final ExchangeEndpoint endpoint;
  private final ShuffleReadMetricsReporter metrics;
  /** The exchange's own counts (pulls, pushed batches read), or null. */
  private final ExchangeMetrics exchangeMetrics;
  private final int shuffleId;
  /** Reduce partition → endpoint → map ids, in the tracker's order. */
  private final TreeMap<Integer, Map<EndpointAddress, List<Long>>> partitions = new TreeMap<>();
  /** What a failure of an endpoint's map names: its location and map index. */
  private final Map<EndpointAddress, Map<Long, MapBlock>> blocks = new HashMap<>();
  private boolean started;
  private PartitionReader reader;

  ExchangeReduceInput(ExchangeEndpoint endpoint,
      Iterator<Tuple2<BlockManagerId, Seq<Tuple3<BlockId, Object, Object>>>> locations,
      ShuffleReadMetricsReporter metrics, ExchangeMetrics exchangeMetrics) {
    this.endpoint = endpoint;
    this.metrics = metrics;
    this.exchangeMetrics = exchangeMetrics;
    int shuffle = -1;
    while (locations.hasNext()) {
      Tuple2<BlockManagerId, Seq<Tuple3<BlockId, Object, Object>>> location = locations.next();
      BlockManagerId where = location._1();
      EndpointAddress address = new EndpointAddress(where.host(), where.port());
      for (Tuple3<BlockId, Object, Object> block : scala.jdk.javaapi.CollectionConverters.asJava(location._2())) {
        int mapIndex = (Integer) block._3();
        switch (block._1()) {
          case ShuffleBlockId id -> {
            shuffle = id.shuffleId();
            add(address, new MapBlock(where, id.mapId(), mapIndex), id.reduceId());
          }
          case ShuffleBlockBatchId id -> {
            shuffle = id.shuffleId();
            for (int reduce = id.startReduceId(); reduce < id.endReduceId(); reduce++) {
              add(address, new MapBlock(where, id.mapId(), mapIndex), reduce);
            }
          }
          default -> throw new IllegalStateException("the Thallus exchange store cannot read block " + block._1());
        }
      }
    }
    this.shuffleId = shuffle;
  }

  private void add(EndpointAddress address, MapBlock block, int reduce) {
    partitions.computeIfAbsent(reduce, r -> new LinkedHashMap<>())
        .computeIfAbsent(address, a -> new ArrayList<>()).add(block.mapId());
    blocks.computeIfAbsent(address, a -> new HashMap<>()).putIfAbsent(block.mapId(), block);
  }

  @Override
  public VectorSchemaRoot next() {
    try {
      if (!started) {
        started = true;
        if (partitions.isEmpty()) {
          return null;
        }
        long began = System.nanoTime();
        reader = endpoint.read(shuffleId, partitions);
        metrics.incFetchWaitTime(java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began));
      }
      if (reader == null) {
        return null;
      }
      VectorSchemaRoot batch = reader.next();
      if (batch == null) {
        closeReader();
      }
      return batch;
    } catch (ShuffleFetchException e) {
      throw fetchFailed(e);
    }
  }

  /**
   * Spark's answer to a peer that cannot be read. One exception names one map (the first the failed read named, with
   * the lowest partition it named that this map has output for); with its location (the executor) Spark unregisters
   * every map output of that executor, so all maps of the peer run again.
   */
  private RuntimeException fetchFailed(ShuffleFetchException e) {
    Map<Long, MapBlock> ofPeer = blocks.getOrDefault(e.peer(), Map.of());
    MapBlock first = e.mapIds().stream().map(ofPeer::get).filter(b -> b != null).findFirst()
        .orElseThrow(() -> new IllegalStateException("an exchange read failed for maps it did not ask for", e));
    int reduceId = e.partitions().stream()
        .filter(p -> partitions.getOrDefault(p, Map.of()).getOrDefault(e.peer(), List.of()).contains(first.mapId()))
        .findFirst().orElse(e.partition());
    // Constructing it records the failure in the task's context, which is what Spark's executor reports.
    FetchFailedException failure = new FetchFailedException(first.location(), e.shuffleId(), first.mapId(),
        first.mapIndex(), reduceId, e.getMessage(), e);
    return ExchangeReduceInput.<RuntimeException>unchecked(failure);
  }

  /** Spark's FetchFailedException is a checked (Scala) exception; Spark's own readers throw it from iterators too. */
  @SuppressWarnings("unchecked")
  private static <E extends Throwable> E unchecked(Throwable failure) throws E {
    throw (E) failure;
  }

  private void closeReader() {
    if (exchangeMetrics != null) {
      exchangeMetrics.pullRequests.add(reader.pullRequests());
      exchangeMetrics.pulledBatches.add(reader.pulledBatches());
      exchangeMetrics.pushedBatchesRead.add(reader.pushedBatchesRead());
    }
    reader.close();
    reader = null;
  }

  @Override
  public void close() {
    if (reader != null) {
      closeReader();
    }
  }
}
