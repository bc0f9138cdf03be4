package io.thallus.spark.shuffle;

import java.io.IOException;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * One map task's output while it is written: each input row goes straight into the Arrow batch of its reduce
 * partition (one conversion, no UnsafeRow in between, our own {@link ColumnWriter}s); an input batch is scattered
 * into them column by column, without becoming rows; and a full batch goes to the store's sink, after which the
 * partition's buffers are reused.
 */
final class PartitionedBatchBuilder implements AutoCloseable {
  private final Schema schema;
  private final DataType[] types;
  private final BufferAllocator allocator;
  private final int batchRows;
  private final ShuffleStore.MapOutputSink sink;
  private final RowPartitionIds partitionIds;
  private final PartitionBatch[] batches;
  // The scatter's state for an input batch, made at the first batch (a map task of rows never needs it).
  private PartitionGrouping grouping;
  private int[] nextRow;
  private int[] piecePartition;
  private int[] pieceFrom;
  private int[] pieceTo;
  private int[] pieceIndex;
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

  /**
   * Appends each row of {@code batch} to its partition's batch, column by column: the partition ids of all its rows
   * first, the rows grouped by partition ({@link PartitionGrouping}), then each column copied for every partition in
   * one pass ({@link ColumnSource}: Arrow buffers read directly where the column is Arrow, else Spark's getters). A
   * partition whose batch fills at the batch size takes its rows in more than one round, flushed between them, so the
   * batches are cut where the row path cuts them.
   */
  void append(ColumnarBatch batch) throws IOException {
    int count = batch.numRows();
    if (count == 0) {
      return;
    }
    ColumnVector[] columns = new ColumnVector[batch.numCols()];
    if (columns.length != types.length) {
      throw new IllegalArgumentException("An input batch has " + columns.length + " columns; the exchange has "
          + types.length);
    }
    for (int i = 0; i < columns.length; i++) {
      columns[i] = batch.column(i);
    }
    // Checked and asked for nulls once per batch, for the partition ids and the copy alike.
    ColumnSource[] sources = ColumnSource.of(columns, types, count);
    PartitionGrouping grouping = grouping();
    grouping.group(partitionIds, sources, count);
    int[] rowIds = grouping.rowIds();
    int present = grouping.presentCount();
    for (int k = 0; k < present; k++) {
      int partition = grouping.present(k);
      nextRow[partition] = grouping.start(partition);
    }
    int pieces;
    do {
      // This round: each partition with rows left takes as many as its batch has room for.
      pieces = 0;
      for (int k = 0; k < present; k++) {
        int partition = grouping.present(k);
        int from = nextRow[partition];
        int end = grouping.end(partition);
        if (from < end) {
          PartitionBatch to = batchOf(partition);
          int take = Math.min(end - from, batchRows - to.rows());
          piecePartition[pieces] = partition;
          pieceFrom[pieces] = from;
          pieceTo[pieces] = from + take;
          pieceIndex[pieces] = to.reserve(take);
          pieces++;
        }
      }
      for (int column = 0; column < sources.length; column++) {
        ColumnSource source = sources[column];
        for (int piece = 0; piece < pieces; piece++) {
          batches[piecePartition[piece]].copy(column, source, rowIds, pieceFrom[piece], pieceTo[piece],
              pieceIndex[piece]);
        }
      }
      for (int piece = 0; piece < pieces; piece++) {
        int partition = piecePartition[piece];
        nextRow[partition] = pieceTo[piece];
        if (batches[partition].added(pieceTo[piece] - pieceFrom[piece]) == batchRows) {
          flush(partition);
        }
      }
    } while (pieces > 0);
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

  private PartitionGrouping grouping() {
    if (grouping == null) {
      int partitions = batches.length;
      grouping = new PartitionGrouping(partitions);
      nextRow = new int[partitions];
      piecePartition = new int[partitions];
      pieceFrom = new int[partitions];
      pieceTo = new int[partitions];
      pieceIndex = new int[partitions];
    }
    return grouping;
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
