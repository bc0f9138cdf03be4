package io.thallus.exchange.internal;

import io.thallus.spi.BatchContents;
import io.thallus.engine.QueryResult;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * One pull's answer: the batches of the pulled partitions, partition by partition in ascending order and within a
 * partition map by map in the request's order, joined into as few batches as {@code joinBytes} allows (across
 * partitions too: a reduce task reading a range does not tell them apart), so a reducer's pull of a range of
 * partitions from one endpoint is one batch (one body) however many partitions, maps and pieces it has. Compressed
 * batches (an endpoint that compresses its outputs) are joined
 * too: decompressed, joined and compressed once, {@code joinBytes} bounding the joined batch's plain bytes, so a
 * compressed pull is one body as well; the extra codec work is the sender's, and it saves the per-batch frames.
 */
final class PullAnswer implements QueryResult {
  /** One map's batches of one partition. */
  record Part(StoredMapOutput output, int partition) {}

  private final Schema schema;
  private final Deque<Part> parts;
  private final Deque<ArrowRecordBatch> pending = new ArrayDeque<>();
  private final BufferAllocator allocator;
  private final long joinBytes;
  private volatile boolean cancelled;

  PullAnswer(Schema schema, List<Part> parts, BufferAllocator allocator, long joinBytes) {
    this.schema = schema;
    this.parts = new ArrayDeque<>(parts);
    this.allocator = allocator;
    this.joinBytes = joinBytes;
  }

  @Override
  public Schema schema() {
    return schema;
  }

  @Override
  public BatchContents next() {
    List<ArrowRecordBatch> group = new ArrayList<>();
    long bytes = 0;
    try {
      while (!cancelled) {
        if (pending.isEmpty()) {
          Part part = parts.poll();
          if (part == null) {
            break;
          }
          pending.addAll(part.output().read(part.partition(), allocator));
          continue;
        }
        ArrowRecordBatch head = pending.peek();
        // The joined batch's plain bytes: what it takes in memory while it is made, compressed or not.
        long headBytes = Batches.plainBytes(head);
        if (!group.isEmpty() && bytes + headBytes > joinBytes) {
          break;
        }
        group.add(pending.poll());
        bytes += headBytes;
      }
      group.removeIf(batch -> {
        if (batch.getLength() == 0) {
          batch.close();
          return true;
        }
        return false;
      });
      if (group.isEmpty()) {
        return null;
      }
      if (group.size() == 1) {
        return new BatchContents(List.of(), group.remove(0));
      }
      return new BatchContents(List.of(), Batches.joinKept(schema, group, allocator));
    } finally {
      group.forEach(ArrowRecordBatch::close);
    }
  }

  @Override
  public void cancel() {
    cancelled = true;
  }

  @Override
  public void close() {
    cancelled = true;
    while (!pending.isEmpty()) {
      pending.poll().close();
    }
    parts.clear();
  }
}
