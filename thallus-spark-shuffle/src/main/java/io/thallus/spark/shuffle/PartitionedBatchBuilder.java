package io.thallus.spark.shuffle;

import java.io.IOException;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * One map task's output while it is written: each row goes straight into the Arrow batch of its reduce partition
 * (one conversion, no UnsafeRow in between, our own {@link ColumnWriter}s), and a full batch goes to the store's
 * sink, after which the partition's buffers are reused.
 */
final class PartitionedBatchBuilder implements AutoCloseable {
  private final Schema schema;
  private final DataType[] types;
  private final BufferAllocator allocator;
  private final int batchRows;
  private final ShuffleStore.MapOutputSink sink;
  private final RowPartitionIds partitionIds;
  private final PartitionBatch[] batches;
  private int[] idsOfBatch = new int[0];
  private long rows;

  PartitionedBatchBuilder(ExchangeLayout layout, RowPartitionIds partitionIds, BufferAllocator allocator,
      ShuffleStore.MapOutputSink sink) {
    this.schema = layout.arrowSchema();
    this.types = layout.types();
    this.allocator = allocator;
    this.batchRows = layout.batchRows();
    this.sink = sink;
    this.partitionIds = partitionIds;
    this.batches = new PartitionBatch[layout.partitions()];
  }

  /** Appends {@code row} to its partition's batch. */
  void append(InternalRow row) throws IOException {
    int partition = partitionIds.of(row);
    if (batchOf(partition).append(row) == batchRows) {
      flush(partition);
    }
    rows++;
  }

  /** Appends each row of {@code batch}: the partition ids for the whole batch first, column by column. */
  void append(ColumnarBatch batch) throws IOException {
    int count = batch.numRows();
    ColumnVector[] columns = new ColumnVector[batch.numCols()];
    for (int i = 0; i < columns.length; i++) {
      columns[i] = batch.column(i);
    }
    if (idsOfBatch.length < count) {
      idsOfBatch = new int[count];
    }
    int[] ids = idsOfBatch;
    partitionIds.of(columns, count, ids);
    for (int rowId = 0; rowId < count; rowId++) {
      int partition = ids[rowId];
      if (batchOf(partition).append(columns, rowId) == batchRows) {
        flush(partition);
      }
    }
    rows += count;
  }

  /** Flushes every partition's last batch into the sink. */
  void finish() throws IOException {
    for (int partition = 0; partition < batches.length; partition++) {
      if (batches[partition] != null && batches[partition].rows() > 0) {
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

  private PartitionBatch batchOf(int partition) {
    PartitionBatch batch = batches[partition];
    if (batch == null) {
      batch = batches[partition] = new PartitionBatch(schema, types, allocator, batchRows);
    }
    return batch;
  }

  private void flush(int partition) throws IOException {
    PartitionBatch batch = batches[partition];
    sink.add(partition, batch.finish());
    batch.reset();
  }

  @Override
  public void close() {
    for (PartitionBatch batch : batches) {
      if (batch != null) {
        batch.close();
      }
    }
  }
}
