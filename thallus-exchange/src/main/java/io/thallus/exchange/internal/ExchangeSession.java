package io.thallus.exchange.internal;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.engine.CancelSignal;
import io.thallus.engine.EngineSession;
import io.thallus.engine.IngestSpec;
import io.thallus.engine.QueryResult;
import io.thallus.engine.QuerySpec;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * One peer endpoint's connection to this one: its pulls (queries) answered from the map outputs here, its pushes
 * (ingests) kept for the reducers here within the peer's {@link PushCredits}.
 */
final class ExchangeSession implements EngineSession {
  /** What a push's copies may take past what it announced (buffers are 8-byte aligned, copies may round up). */
  private static final long SLACK_BYTES = 4 << 10;

  private final MapOutputStore outputs;
  private final PushedStore pushed;
  private final PushCredits credits;
  private final long joinBytes;
  private final Counters counters;

  ExchangeSession(MapOutputStore outputs, PushedStore pushed, PushCredits credits, long joinBytes,
      Counters counters) {
    this.outputs = outputs;
    this.pushed = pushed;
    this.credits = credits;
    this.joinBytes = joinBytes;
    this.counters = counters;
  }

  @Override
  public QueryResult execute(QuerySpec spec, BufferAllocator allocator, CancelSignal cancel) {
    if (!ExchangeRequests.PULL_STATEMENT.equals(spec.sql()) || spec.parameters().size() != 1
        || !(spec.parameters().get(0) instanceof byte[] request)) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "an exchange endpoint answers only exchange pulls ('"
          + ExchangeRequests.PULL_STATEMENT + "' with the pull request as its one binary parameter)");
    }
    ExchangeRequests.Pull pull = ExchangeRequests.decodePull(request);
    int[] partitions = pull.partitions();
    List<PullAnswer.Part> parts = new ArrayList<>();
    Schema schema = null;
    for (int i = 0; i < partitions.length; i++) {
      int partition = partitions[i];
      List<Long> missing = new ArrayList<>();
      for (long mapId : pull.mapIds(i)) {
        StoredMapOutput output = outputs.committed(pull.shuffleId(), mapId);
        if (output == null) {
          missing.add(mapId);
          continue;
        }
        if (schema == null) {
          schema = output.schema();
        } else if (!output.schema().equals(schema)) {
          throw ThallusException.of(StatusCode.FAILED_PRECONDITION, "maps of shuffle " + pull.shuffleId()
              + " differ in schema");
        }
        if (partition >= output.numPartitions()) {
          throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "partition " + partition + " is not one of map "
              + output.mapId() + "'s " + output.numPartitions() + " partitions");
        }
        parts.add(new PullAnswer.Part(output, partition));
      }
      if (!missing.isEmpty()) {
        throw ThallusException.of(StatusCode.NOT_FOUND, "maps " + missing + " of shuffle " + pull.shuffleId()
            + " have no committed output on this endpoint");
      }
    }
    return new PullAnswer(schema, parts, allocator, joinBytes);
  }

  @Override
  public long ingest(IngestSpec spec, ArrowReader batches, BufferAllocator allocator, CancelSignal cancel) {
    String encoded = spec.schema().getCustomMetadata() == null ? null
        : spec.schema().getCustomMetadata().get(ExchangeRequests.PUSH_HEADER_KEY);
    if (encoded == null) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "an exchange endpoint takes only exchange pushes (an "
          + "ingest whose schema carries " + ExchangeRequests.PUSH_HEADER_KEY + ")");
    }
    ExchangeRequests.PushHeader header = ExchangeRequests.decodePush(encoded);
    pushed.checkAccepting(header.shuffleId());
    Schema schema = new Schema(spec.schema().getFields());
    try {
      credits.reserve(header.bytes());
    } catch (ThallusException full) {
      // The sender stops pushing this map here; what it pushed before is of no use without the rest.
      pushed.abandon(header.shuffleId(), header.mapId());
      throw full;
    }
    Map<Integer, List<ArrowRecordBatch>> byPartition = new LinkedHashMap<>();
    long kept = 0;
    try {
      long rows = split(header, batches, byPartition);
      for (List<ArrowRecordBatch> list : byPartition.values()) {
        for (ArrowRecordBatch batch : list) {
          kept += Batches.bytes(batch);
        }
      }
      // The reservation becomes the bytes held: each held batch gives its own bytes back when it is taken.
      credits.charge(kept - header.bytes());
      kept = -1;
      pushed.accept(header, schema, byPartition, credits);
      byPartition = Map.of();
      counters.pushesReceived.incrementAndGet();
      return rows;
    } catch (RuntimeException broken) {
      pushed.abandon(header.shuffleId(), header.mapId());
      throw broken;
    } finally {
      if (kept >= 0) {
        credits.release(header.bytes());
      }
      byPartition.values().forEach(list -> list.forEach(ArrowRecordBatch::close));
    }
  }

  /** Copies the push's rows, run by run, into this endpoint's memory; checks the rows against the header. */
  private long split(ExchangeRequests.PushHeader header, ArrowReader batches,
      Map<Integer, List<ArrowRecordBatch>> byPartition) {
    int[] partitions = header.partitions();
    int[] runRows = header.rows();
    int run = 0;
    int usedOfRun = 0;
    long rows = 0;
    long bytes = 0;
    try {
      VectorSchemaRoot root = batches.getVectorSchemaRoot();
      while (batches.loadNextBatch()) {
        counters.pushFramesReceived.incrementAndGet();
        int at = 0;
        int count = root.getRowCount();
        rows += count;
        // One copy of the whole batch into this endpoint's memory (the transport's buffers go back at once), then
        // each partition's run a slice of that copy: no copy per run.
        try (VectorSchemaRoot own = VectorSchemaRoot.create(new Schema(root.getSchema().getFields()),
            outputs.allocator())) {
          try (ArrowRecordBatch copy = Batches.copy(root, outputs.allocator())) {
            new VectorLoader(own).load(copy);
          }
          while (at < count) {
            while (run < partitions.length && usedOfRun == runRows[run]) {
              run++;
              usedOfRun = 0;
            }
            if (run == partitions.length) {
              throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "a push of map " + header.mapId()
                  + " carries more rows than its header's " + header.totalRows());
            }
            int take = Math.min(count - at, runRows[run] - usedOfRun);
            ArrowRecordBatch slice = Batches.slice(own, at, take);
            byPartition.computeIfAbsent(partitions[run], p -> new ArrayList<>()).add(slice);
            bytes += Batches.bytes(slice);
            if (bytes > header.bytes() + header.bytes() / 2 + SLACK_BYTES) {
              throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "a push of map " + header.mapId() + " carries "
                  + "more than the " + header.bytes() + " bytes it announced");
            }
            at += take;
            usedOfRun += take;
          }
        }
      }
    } catch (IOException e) {
      throw ThallusException.of(StatusCode.UNAVAILABLE, "a push of map " + header.mapId() + " broke off: " + e, e);
    }
    if (rows != header.totalRows()) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "a push of map " + header.mapId() + " carries " + rows
          + " rows; its header says " + header.totalRows());
    }
    return rows;
  }

  @Override
  public void close() {}
}
