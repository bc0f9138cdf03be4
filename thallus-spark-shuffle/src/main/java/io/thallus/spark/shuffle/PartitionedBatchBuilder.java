package io.thallus.spark.shuffle;

import java.io.IOException;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.arrow.ArrowWriter;

/**
 * One map task's output while it is written: rows go straight into an Arrow batch of their reduce partition (one
 * conversion, no UnsafeRow in between), and a full batch becomes a compressed frame in that partition's buffer.
 */
final class PartitionedBatchBuilder implements AutoCloseable {
  private final ExchangeLayout layout;
  private final Schema schema;
  private final BufferAllocator allocator;
  private final int batchRows;
  private final BatchFrames.Encoder encoder;
  private final VectorSchemaRoot[] roots;
  private final ArrowWriter[] writers;
  private final int[] rowsInBatch;
  private final GrowableBytes[] frames;
  private long rows;
  private long rawBytes;
  private long encodeNanos;

  PartitionedBatchBuilder(ExchangeLayout layout, BufferAllocator allocator) {
    this.layout = layout;
    this.schema = layout.arrowSchema();
    int partitions = layout.partitions();
    this.allocator = allocator;
    this.batchRows = layout.batchRows();
    this.encoder = new BatchFrames.Encoder(layout.codec());
    this.roots = new VectorSchemaRoot[partitions];
    this.writers = new ArrowWriter[partitions];
    this.rowsInBatch = new int[partitions];
    this.frames = new GrowableBytes[partitions];
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

  /** Flushes every partition's last batch and returns the frames, by reduce partition (null where empty). */
  GrowableBytes[] finish() throws IOException {
    for (int partition = 0; partition < roots.length; partition++) {
      if (rowsInBatch[partition] > 0) {
        flush(partition);
      }
    }
    return frames;
  }

  long rows() {
    return rows;
  }

  /** Arrow bytes before compression: what AQE's statistics call the data size. */
  long rawBytes() {
    return rawBytes;
  }

  long encodeNanos() {
    return encodeNanos;
  }

  private void flush(int partition) throws IOException {
    writers[partition].finish();
    if (frames[partition] == null) {
      frames[partition] = new GrowableBytes(1 << 12);
    }
    long started = System.nanoTime();
    rawBytes += encoder.encode(roots[partition], frames[partition]);
    encodeNanos += System.nanoTime() - started;
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
