package io.thallus.spark;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/** Columnar readers only: Arrow batches become ColumnarBatches without a copy, so rows are never built here. */
final class ThallusReaderFactory implements PartitionReaderFactory {
  private static final long serialVersionUID = 1L;

  static final ThallusReaderFactory INSTANCE = new ThallusReaderFactory();

  private ThallusReaderFactory() {}

  @Override
  public PartitionReader<InternalRow> createReader(InputPartition partition) {
    throw new UnsupportedOperationException("the thallus source reads columnar batches only");
  }

  @Override
  public PartitionReader<ColumnarBatch> createColumnarReader(InputPartition partition) {
    return ColumnarReader.open((ThallusInputPartition) partition);
  }

  @Override
  public boolean supportColumnarReads(InputPartition partition) {
    return true;
  }
}
