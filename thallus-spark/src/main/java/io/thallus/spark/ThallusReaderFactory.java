package io.thallus.spark;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * Arrow batches become ColumnarBatches without a copy. Spark reads this source columnar; should a plan ask for rows
 * anyway, they are served from the same batches.
 */
final class ThallusReaderFactory implements PartitionReaderFactory {
  private static final long serialVersionUID = 1L;

  static final ThallusReaderFactory INSTANCE = new ThallusReaderFactory();

  private ThallusReaderFactory() {}

  @Override
  public PartitionReader<InternalRow> createReader(InputPartition partition) {
    ColumnarReader batches = ColumnarReader.open((ThallusInputPartition) partition);
    return new PartitionReader<>() {
      private java.util.Iterator<InternalRow> rows = java.util.Collections.emptyIterator();

      @Override
      public boolean next() {
        while (!rows.hasNext()) {
          if (!batches.next()) {
            return false;
          }
          rows = batches.get().rowIterator();
        }
        return true;
      }

      @Override
      public InternalRow get() {
        return rows.next();
      }

      @Override
      public void close() {
        batches.close();
      }
    };
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
