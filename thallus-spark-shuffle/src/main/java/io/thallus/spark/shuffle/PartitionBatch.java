package io.thallus.spark.shuffle;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.catalyst.expressions.SpecializedGetters;
import org.apache.spark.sql.types.DataType;

/**
 * One reduce partition's batch while a map task fills it: an Arrow root and a {@link ColumnWriter} per column. It is
 * filled row by row ({@link #append}) from input rows, or column by column ({@link #reserve}, {@link #copy},
 * {@link #added}) from an input batch's rows of this partition. Its vectors start small and double when rows would
 * not fit (checked once per row or per copied run, not per value), up to the batch size, and keep their buffers from
 * one batch to the next.
 */
final class PartitionBatch implements AutoCloseable {
  /** Rows a partition's first batch has room for: most partitions of a small map task stay below it. */
  static final int INITIAL_ROWS = 256;

  private final VectorSchemaRoot root;
  private final ColumnWriter[] writers;
  private int capacity;
  private int rows;

  PartitionBatch(Schema schema, DataType[] types, BufferAllocator allocator, int batchRows) {
    this.root = VectorSchemaRoot.create(schema, allocator);
    this.writers = new ColumnWriter[types.length];
    int initial = Math.min(INITIAL_ROWS, batchRows);
    try {
      for (int i = 0; i < types.length; i++) {
        FieldVector vector = root.getVector(i);
        vector.setInitialCapacity(initial);
        vector.allocateNew();
        writers[i] = ColumnWriter.of(types[i], vector);
        writers[i].addressesChanged();
      }
    } catch (RuntimeException e) {
      root.close();
      throw e;
    }
    this.capacity = capacityOfColumns();
  }

  /** Appends {@code row} (its fields in the exchange's column order); returns the rows in the batch now. */
  int append(SpecializedGetters row) {
    int index = roomForOneMore();
    ColumnWriter[] columns = writers;
    for (int i = 0; i < columns.length; i++) {
      columns[i].write(row, i, index);
    }
    return rows = index + 1;
  }

  /** Room for {@code count} more rows, to be filled column by column ({@link #copy}); returns the first one's index. */
  int reserve(int count) {
    int index = rows;
    if (index + count > capacity) {
      grow(index + count);
    }
    return index;
  }

  /** Rows {@code rowIds[from..to)} of {@code source} into column {@code column}'s rows {@code index} onwards. */
  void copy(int column, ColumnSource source, int[] rowIds, int from, int to, int index) {
    writers[column].copy(source, rowIds, from, to, index);
  }

  /** Marks {@code count} rows reserved and copied into every column as added; returns the rows in the batch now. */
  int added(int count) {
    return rows += count;
  }

  int rows() {
    return rows;
  }

  /** The filled batch, ready for the store; {@link #reset} after the store has taken it. */
  VectorSchemaRoot finish() {
    for (ColumnWriter writer : writers) {
      writer.finish(rows);
    }
    root.setRowCount(rows);
    return root;
  }

  /** Empties the batch for the partition's next rows, keeping its buffers. */
  void reset() {
    for (ColumnWriter writer : writers) {
      writer.reset();
    }
    root.setRowCount(0);
    rows = 0;
  }

  private int roomForOneMore() {
    int index = rows;
    if (index == capacity) {
      grow(index + 1);
    }
    return index;
  }

  private void grow(int needed) {
    for (ColumnWriter writer : writers) {
      writer.ensureRows(Math.max(needed, 2 * capacity));
    }
    capacity = capacityOfColumns();
  }

  private int capacityOfColumns() {
    int rowsFitting = Integer.MAX_VALUE;
    for (ColumnWriter writer : writers) {
      rowsFitting = Math.min(rowsFitting, writer.capacity());
    }
    return rowsFitting;
  }

  @Override
  public void close() {
    root.close();
  }
}
