package io.thallus.exchange;

import io.thallus.BatchCompression;
import io.thallus.exchange.internal.Batches;
import io.thallus.exchange.internal.ExchangeRequests;
import io.thallus.exchange.internal.MapOutputStore;
import io.thallus.exchange.internal.PushSender;
import io.thallus.exchange.internal.StoredMapOutput;
import io.thallus.internal.batch.BatchCompressor;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;

/**
 * One map task's output, written by one thread: {@link #add} each partition's batches as they are made, then
 * {@link #commit}. The output stays with this endpoint (memory, then spilled) until its shuffle is removed; as
 * batches are added they are also pushed, a chunk at a time, to the endpoint that will read their partition, when
 * that endpoint has room. Closing without a commit drops the output.
 */
public final class MapOutput implements AutoCloseable {
  /** Batches waiting to be pushed to one peer. */
  private static final class Pending {
    final List<Integer> partitions = new ArrayList<>();
    final List<ArrowRecordBatch> batches = new ArrayList<>();
    /** The batches' bytes as they are kept and sent (compressed, when the output is). */
    long bytes;
    /** Their bytes once decompressed: what the peer holds of them, so what its push credits must cover. */
    long plainBytes;
    int sequence;

    void free() {
      batches.forEach(ArrowRecordBatch::close);
      partitions.clear();
      batches.clear();
      bytes = 0;
      plainBytes = 0;
    }
  }

  private final MapOutputStore store;
  private final StoredMapOutput output;
  private final EndpointAddress[] pushTargets;
  private final PushSender pushes;
  private final long chunkBytes;
  private final Map<EndpointAddress, Pending> pending = new HashMap<>();
  /** Compresses each added batch as it is copied; null when the output is kept as it is. */
  private final BatchCompressor compressor;
  private boolean committed;
  private int pushesSubmitted;
  private long pushFramesSubmitted;
  private boolean closed;

  MapOutput(MapOutputStore store, StoredMapOutput output, EndpointAddress[] pushTargets, PushSender pushes,
      long chunkBytes, BatchCompression compression) {
    this.compressor = compression == BatchCompression.NONE ? null : new BatchCompressor(compression, store.allocator());
    this.store = store;
    this.output = output;
    this.pushTargets = pushTargets;
    this.pushes = pushes;
    this.chunkBytes = chunkBytes;
    for (EndpointAddress peer : pushTargets) {
      if (peer != null) {
        pending.computeIfAbsent(peer, p -> new Pending());
      }
    }
  }

  /**
   * Adds {@code batch}'s rows to {@code partition}: copied (compressed straight from the root's buffers, when the
   * endpoint compresses), so the caller may refill its root at once. The batch must have the schema the output was
   * opened with.
   */
  public void add(int partition, VectorSchemaRoot batch) {
    checkOpen();
    if (partition < 0 || partition >= output.numPartitions()) {
      throw new IllegalArgumentException("partition " + partition + " is not one of " + output.numPartitions());
    }
    if (!batch.getSchema().equals(output.schema())) {
      throw new IllegalArgumentException("a batch of schema " + batch.getSchema() + " added to map " + output.mapId()
          + " of schema " + output.schema());
    }
    if (batch.getRowCount() == 0) {
      return;
    }
    ArrowRecordBatch copy = compressor == null ? Batches.copy(batch, store.allocator())
        : Batches.compress(batch, compressor, store.allocator());
    EndpointAddress peer = pushTargets[partition];
    if (peer != null && !pushes.stopped(peer, output.shuffleId(), output.mapId())) {
      Pending waiting = pending.get(peer);
      waiting.partitions.add(partition);
      waiting.batches.add(Batches.retain(copy));
      waiting.bytes += Batches.bytes(copy);
      waiting.plainBytes += Batches.plainBytes(copy);
      if (waiting.bytes >= chunkBytes) {
        push(peer, waiting, false);
      }
    }
    store.add(output, partition, copy);
  }

  /**
   * Ends the output and answers its bytes per partition (the buffers' bytes, as they sit in memory or in the spill
   * file: compressed bytes when the endpoint compresses): from now on peers may pull it. Pushes the rest of each
   * peer's chunk, flagged as the map's last there.
   */
  public long[] commit() {
    checkOpen();
    committed = true;
    closeCompressor();
    long[] sizes = store.commit(output);
    Set<EndpointAddress> peers = new LinkedHashSet<>(pending.keySet());
    for (EndpointAddress peer : peers) {
      push(peer, pending.get(peer), true);
    }
    return sizes;
  }

  private void push(EndpointAddress peer, Pending waiting, boolean last) {
    if (pushes.stopped(peer, output.shuffleId(), output.mapId())) {
      waiting.free();
      return;
    }
    // Group by partition, keeping each partition's batches in the order they were added.
    int count = waiting.batches.size();
    Integer[] order = new Integer[count];
    for (int i = 0; i < count; i++) {
      order[i] = i;
    }
    java.util.Arrays.sort(order, Comparator.comparingInt(waiting.partitions::get));
    List<ArrowRecordBatch> batches = new ArrayList<>(count);
    List<int[]> runs = new ArrayList<>();
    for (int i : order) {
      ArrowRecordBatch batch = waiting.batches.get(i);
      int partition = waiting.partitions.get(i);
      batches.add(batch);
      if (!runs.isEmpty() && runs.get(runs.size() - 1)[0] == partition) {
        runs.get(runs.size() - 1)[1] += batch.getLength();
      } else {
        runs.add(new int[] {partition, batch.getLength()});
      }
    }
    if (last) {
      // The last push names every partition this peer reads, empty ones too: the peer then knows it has all of
      // this map's rows for them, and pulls only the others.
      java.util.Set<Integer> named = new java.util.HashSet<>();
      runs.forEach(run -> named.add(run[0]));
      for (int partition = 0; partition < pushTargets.length; partition++) {
        if (peer.equals(pushTargets[partition]) && !named.contains(partition)) {
          runs.add(new int[] {partition, 0});
        }
      }
    }
    int[] partitions = runs.stream().mapToInt(run -> run[0]).toArray();
    int[] rows = runs.stream().mapToInt(run -> run[1]).toArray();
    ExchangeRequests.PushHeader header = new ExchangeRequests.PushHeader(output.shuffleId(), output.mapId(),
        waiting.sequence++, last, waiting.plainBytes, partitions, rows);
    waiting.partitions.clear();
    waiting.batches.clear();
    waiting.bytes = 0;
    waiting.plainBytes = 0;
    pushesSubmitted++;
    pushFramesSubmitted += PushSender.frames(batches);
    pushes.submit(new PushSender.Push(peer, header, output.schema(), batches));
  }

  private void closeCompressor() {
    if (compressor != null) {
      compressor.close();
    }
  }

  /** Pushes (chunks) this output has handed to the network thread so far, to all peers. */
  public int pushesSubmitted() {
    return pushesSubmitted;
  }

  /** The BATCH frames (bodies) those pushes carry: one per push with rows. */
  public long pushFramesSubmitted() {
    return pushFramesSubmitted;
  }

  public int shuffleId() {
    return output.shuffleId();
  }

  public long mapId() {
    return output.mapId();
  }

  private void checkOpen() {
    if (closed || committed) {
      throw new IllegalStateException("map " + output.mapId() + " of shuffle " + output.shuffleId() + " is "
          + (closed ? "closed" : "committed"));
    }
  }

  /** Drops what is still waiting to be pushed; an output that was not committed is dropped too. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    closeCompressor();
    pending.values().forEach(Pending::free);
    if (!committed) {
      store.discard(output);
    }
  }
}
