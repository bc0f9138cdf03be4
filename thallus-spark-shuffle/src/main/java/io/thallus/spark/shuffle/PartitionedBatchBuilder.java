package io.thallus.spark.shuffle;

import java.io.IOException;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.arrow.ArrowWriter;

/**
 * One map task's output while it is written: rows go straight into an Arrow batch of their reduce partition (one
 * conversion, no UnsafeRow in between), and a full batch goes to the store's sink.
 */
final class PartitionedBatchBuilder implements AutoCloseable {
  private final ExchangeLayout layout;
  private final Schema schema;
  private final BufferAllocator allocator;
  private final int batchRows;
  private final ShuffleStore.MapOutputSink sink;
  private final VectorSchemaRoot[] roots;
  private final ArrowWriter[] writers;
  private final int[] rowsInBatch;
  private long rows;

  PartitionedBatchBuilder(ExchangeLayout layout, BufferAllocator allocator, ShuffleStore.MapOutputSink sink) {
    this.layout = layout;
    this.schema = layout.arrowSchema();
    int partitions = layout.partitions();
    this.allocator = allocator;
    this.batchRows = layout.batchRows();
    this.sink = sink;
    this.roots = new VectorSchemaRoot[partitions];
    this.writers = new ArrowWriter[partitions];
    this.rowsInBatch = new int[partitions];
  }

  void append(int partition, InternalRow row) throws IOException {
    ArrowWriter writer = writers[partition];
    if (writer == null) {
      roots[partition] = VectorSchemaRoot.create(schema, allocator);
      writer = writers[partition] = layout.writer(roots[partition]);
    }
    writer.write(row);
    rows++;
    if (++rowsInBatch[partition] == batchRows) {
      flush(partition);
    }
  }

  /** Flushes every partition's last batch into the sink. */
  void finish() throws IOException {
    for (int partition = 0; partition < roots.length; partition++) {
      if (rowsInBatch[partition] > 0) {
        flush(partition);
      }
    }
  }

  long rows() {
    return rows;
  }

  /** Arrow bytes before compression: what AQE's statistics call the data size. */
  long rawBytes() {
    return sink.rawBytes();
  }

  long encodeNanos() {
    return sink.encodeNanos();
  }

  private void flush(int partition) throws IOException {
    writers[partition].finish();
    sink.add(partition, roots[partition]);
    writers[partition].reset();
    rowsInBatch[partition] = 0;
  }

  @Override
  public void close() {
    for (VectorSchemaRoot root : roots) {
      if (root != null) {
        root.close();
      }
    }
  }
}
