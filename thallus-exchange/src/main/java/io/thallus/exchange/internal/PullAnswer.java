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
 * One pull's answer: the partition's batches of the pulled maps, map by map in the request's order, joined into as
 * few batches as {@code joinBytes} allows, so a reducer's pull of one partition from one endpoint is one batch (one
 * body) however many maps and pieces it has. Compressed batches (an endpoint that compresses its outputs) are sent
 * as they are kept, one by one: joining them would mean decompressing and compressing again.
 */
final class PullAnswer implements QueryResult {
  private final Schema schema;
  private final int partition;
  private final Deque<StoredMapOutput> outputs;
  private final Deque<ArrowRecordBatch> pending = new ArrayDeque<>();
  private final BufferAllocator allocator;
  private final long joinBytes;
  private volatile boolean cancelled;

  PullAnswer(Schema schema, int partition, List<StoredMapOutput> outputs, BufferAllocator allocator,
      long joinBytes) {
    this.schema = schema;
    this.partition = partition;
    this.outputs = new ArrayDeque<>(outputs);
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
          StoredMapOutput output = outputs.poll();
          if (output == null) {
            break;
          }
          pending.addAll(output.read(partition, allocator));
          continue;
        }
        ArrowRecordBatch head = pending.peek();
        long headBytes = Batches.bytes(head);
        boolean compressed = Batches.isCompressed(head);
        if (!group.isEmpty() && (compressed || bytes + headBytes > joinBytes)) {
          break;
        }
        if (compressed) {
          group.add(pending.poll());
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
      return new BatchContents(List.of(), Batches.join(schema, group, allocator, allocator));
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
    outputs.clear();
  }
}
