package io.thallus.exchange;

import io.thallus.QueryRequest;
import io.thallus.ThallusClient;
import io.thallus.ThallusStream;
import io.thallus.exchange.internal.Batches;
import io.thallus.exchange.internal.Counters;
import io.thallus.exchange.internal.ExchangeRequests;
import io.thallus.exchange.internal.PeerClients;
import io.thallus.internal.batch.BatchDecompressor;
import io.thallus.spi.BatchContents;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.function.Supplier;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * One reduce task's batches of one partition or a range of them: what was pushed here and what this endpoint made
 * itself, partitions ascending, then what it pulls, one request per peer endpoint for all that peer's partitions and
 * maps (answered partition by partition). Each map's batches come in the order they were
 * added, maps not interleaved. A peer that is down or lost its output ends the read with a
 * {@link ShuffleFetchException} naming it and the maps. Read by one thread; close it.
 */
public final class PartitionReader implements AutoCloseable {
  /** Batches already here (pushed, or this endpoint's own), in order. */
  static final class Held {
    final Schema schema;
    final Deque<ArrowRecordBatch> batches;
    final boolean pushed;

    Held(Schema schema, List<ArrowRecordBatch> batches, boolean pushed) {
      this.schema = schema;
      this.batches = new ArrayDeque<>(batches);
      this.pushed = pushed;
    }
  }

  /**
   * This endpoint's own output of one partition, read from its store (memory, or spill files) only when the reader
   * reaches it: a range's partitions are not all held at once.
   */
  record Own(Supplier<Held> read) {}

  /** Partitions and their maps to pull from one peer with one request. */
  static final class Pull {
    final EndpointAddress peer;
    final List<Integer> partitions = new ArrayList<>();
    final List<List<Long>> mapIds = new ArrayList<>();

    Pull(EndpointAddress peer) {
      this.peer = peer;
    }

    /** Adds a partition (above every partition added before) and its maps. */
    void add(int partition, List<Long> maps) {
      partitions.add(partition);
      mapIds.add(List.copyOf(maps));
    }

    ExchangeRequests.Pull request(int shuffleId) {
      int[] ids = partitions.stream().mapToInt(Integer::intValue).toArray();
      long[][] maps = mapIds.stream().map(m -> m.stream().mapToLong(Long::longValue).toArray())
          .toArray(long[][]::new);
      return new ExchangeRequests.Pull(shuffleId, ids, maps);
    }

    List<Long> allMaps() {
      return mapIds.stream().flatMap(List::stream).toList();
    }
  }

  private final int shuffleId;
  private final List<Integer> partitions;
  private final Deque<Object> sources;
  private final PeerClients peers;
  private final BufferAllocator allocator;
  private final Duration timeout;
  private final Counters counters;
  private Object current;
  private VectorSchemaRoot heldRoot;
  private ThallusStream stream;
  private ThallusClient streamClient;
  private boolean closed;
  private int pullRequests;
  private int pushedBatchesRead;
  private int pulledBatches;

  PartitionReader(int shuffleId, List<Integer> partitions, List<Object> sources, PeerClients peers,
      BufferAllocator allocator, Duration timeout, Counters counters) {
    this.shuffleId = shuffleId;
    this.partitions = partitions;
    this.sources = new ArrayDeque<>(sources);
    this.peers = peers;
    this.allocator = allocator;
    this.timeout = timeout;
    this.counters = counters;
  }

  /** The partitions this reader reads, ascending. */
  public List<Integer> partitions() {
    return partitions;
  }

  /** Pull requests this reader has sent so far (one per peer whose maps were not all pushed here). */
  public int pullRequests() {
    return pullRequests;
  }

  /**
   * Batches this reader's pulls answered so far: each one BATCH frame (one body), so one per pull request when each
   * peer's answer is joined into one batch.
   */
  public int pulledBatches() {
    return pulledBatches;
  }

  /** Batches this reader has given from what peers pushed here. */
  public int pushedBatchesRead() {
    return pushedBatchesRead;
  }

  /**
   * The next batch, or null at the end. It stays valid until the next call or {@link #close()}; copy what you keep.
   */
  public VectorSchemaRoot next() {
    if (closed) {
      throw new IllegalStateException("the partition reader is closed");
    }
    while (true) {
      if (current == null) {
        current = sources.poll();
        if (current == null) {
          return null;
        }
        if (current instanceof Own own) {
          current = null; // stays so if the read fails: the reader holds nothing of it
          current = own.read().get();
        }
      }
      VectorSchemaRoot batch = current instanceof Held held ? nextHeld(held) : nextPulled((Pull) current);
      if (batch != null) {
        return batch;
      }
      current = null;
    }
  }

  private VectorSchemaRoot nextHeld(Held held) {
    ArrowRecordBatch batch = held.batches.poll();
    if (batch == null) {
      return null;
    }
    if (heldRoot == null || !heldRoot.getSchema().equals(held.schema)) {
      if (heldRoot != null) {
        heldRoot.close();
      }
      heldRoot = VectorSchemaRoot.create(held.schema, allocator);
    }
    if (Batches.isCompressed(batch)) {
      // This endpoint's own output, kept compressed: its bytes were made here, so the only bound is memory.
      try (BatchContents plain = BatchDecompressor.decompress(new BatchContents(List.of(), batch), allocator,
          Long.MAX_VALUE, "the exchange's memory", "map output batch of shuffle " + shuffleId)) {
        new VectorLoader(heldRoot).load(plain.records());
      }
    } else {
      try (batch) {
        new VectorLoader(heldRoot).load(batch);
      }
    }
    if (held.pushed) {
      pushedBatchesRead++;
      counters.pushedBatchesRead.incrementAndGet();
    }
    return heldRoot;
  }

  private VectorSchemaRoot nextPulled(Pull pull) {
    try {
      if (stream == null) {
        streamClient = peers.client(pull.peer);
        byte[] request = ExchangeRequests.encode(pull.request(shuffleId));
        pullRequests++;
        counters.pullRequests.incrementAndGet();
        stream = streamClient.query(QueryRequest.builder(ExchangeRequests.PULL_STATEMENT).parameters(request)
            .timeout(timeout).build());
      }
      if (stream.loadNextBatch()) {
        VectorSchemaRoot root = stream.getVectorSchemaRoot();
        pulledBatches++;
        counters.pulledBatches.incrementAndGet();
        long bytes = 0;
        for (var vector : root.getFieldVectors()) {
          bytes += vector.getBufferSize();
        }
        counters.pulledBytes.addAndGet(bytes);
        return root;
      }
      stream.close();
      stream = null;
      streamClient = null;
      return null;
    } catch (RuntimeException | java.io.IOException e) {
      if (stream != null) {
        stream.close();
        stream = null;
      }
      if (streamClient != null && !streamClient.isConnected()) {
        peers.forget(pull.peer, streamClient);
      }
      streamClient = null;
      throw new ShuffleFetchException(pull.peer, shuffleId, pull.partitions, pull.allMaps(), e);
    }
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (stream != null) {
      stream.close();
    }
    if (heldRoot != null) {
      heldRoot.close();
    }
    if (current instanceof Held held) {
      held.batches.forEach(ArrowRecordBatch::close);
    }
    for (Object source : sources) {
      if (source instanceof Held held) {
        held.batches.forEach(ArrowRecordBatch::close);
      }
    }
    sources.clear();
  }
}
