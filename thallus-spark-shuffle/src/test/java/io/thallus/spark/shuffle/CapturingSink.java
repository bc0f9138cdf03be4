package io.thallus.spark.shuffle;

import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/** A map output sink that reads each batch back as the reduce side would (the layout's column vectors) and keeps its values. */
final class CapturingSink implements ShuffleStore.MapOutputSink {
  final List<List<List<Object>>> rowsByPartition = new ArrayList<>();
  final List<List<Integer>> batchSizesByPartition = new ArrayList<>();
  private final ExchangeLayout layout;
  private final DataType[] types;

  CapturingSink(ExchangeLayout layout) {
    this.layout = layout;
    this.types = layout.types();
    for (int p = 0; p < layout.partitions(); p++) {
      rowsByPartition.add(new ArrayList<>());
      batchSizesByPartition.add(new ArrayList<>());
    }
  }

  @Override
  public void add(int partition, VectorSchemaRoot batch) {
    ColumnVector[] columns = layout.columns(batch);
    ColumnarBatch read = new ColumnarBatch(columns, batch.getRowCount());
    for (int r = 0; r < batch.getRowCount(); r++) {
      rowsByPartition.get(partition).add(WriterRows.values(read.getRow(r), types));
    }
    batchSizesByPartition.get(partition).add(batch.getRowCount());
  }

  @Override
  public long[] commit() {
    return new long[layout.partitions()];
  }

  @Override
  public long rawBytes() {
    return 0;
  }

  @Override
  public long encodeNanos() {
    return 0;
  }

  @Override
  public void close() {}
}
