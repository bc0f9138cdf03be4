package io.thallus.spark;

import io.thallus.IngestMode;
import io.thallus.IngestRequest;
import io.thallus.IngestResult;
import io.thallus.ThallusClient;
import io.thallus.ThallusIngest;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import java.util.List;
import org.apache.spark.sql.execution.arrow.ArrowFieldWriter;
import org.apache.spark.sql.execution.arrow.ArrowWriter;
import org.apache.spark.sql.execution.arrow.ArrowWriter$;
import org.apache.spark.sql.execution.arrow.BinaryWriter;
import org.apache.spark.sql.execution.arrow.DecimalWriter;
import org.apache.spark.sql.execution.arrow.StringWriter;

/**
 * One task's part of a write: Spark's rows into Arrow vectors (Spark's own {@code ArrowWriter}, with our writers
 * for decimals, strings and binary), sent a batch at a time on the write path into the task's staging table;
 * {@link #commit} finishes the ingest (the staging table is then committed) and tells the driver its name.
 */
final class ThallusDataWriter implements DataWriter<InternalRow> {
  private final WriteJob job;
  private final TableName staging;
  private final BufferAllocator allocator;
  private final ThallusClient client;
  private final VectorSchemaRoot root;
  private final ArrowWriter writer;
  private final ThallusIngest ingest;
  private int pending;
  private boolean closed;

  ThallusDataWriter(WriteJob job, int partition, long taskId) {
    this.job = job;
    this.staging = job.stagingTable(partition, taskId);
    BufferAllocator allocator = Connector.newAllocator("spark-write-" + partition + "-" + taskId);
    ThallusClient client = null;
    VectorSchemaRoot root = null;
    try {
      client = Connector.connect(job.conf(), partition);
      root = VectorSchemaRoot.create(job.arrowSchema(), allocator);
      this.writer = arrowWriter(root);
      this.ingest = client.ingest(IngestRequest.of(staging.sql(), IngestMode.CREATE), root.getSchema());
    } catch (RuntimeException e) {
      if (root != null) {
        root.close();
      }
      if (client != null) {
        client.close();
      }
      allocator.close();
      throw e;
    }
    this.allocator = allocator;
    this.client = client;
    this.root = root;
  }

  /**
   * Spark's writer for each column, but ours where Spark's costs most per value: decimals of up to 18 digits as
   * longs (no BigDecimal per value), strings and binary copied straight into the vector's buffers. Ours are
   * chosen by the writer Spark picks for the column, so each takes exactly the columns of the one it replaces.
   */
  private static ArrowWriter arrowWriter(VectorSchemaRoot root) {
    List<FieldVector> vectors = root.getFieldVectors();
    ArrowFieldWriter[] fields = new ArrowFieldWriter[vectors.size()];
    for (int i = 0; i < fields.length; i++) {
      fields[i] = switch (ArrowWriter$.MODULE$.createFieldWriter(vectors.get(i))) {
        case DecimalWriter decimal when decimal.valueVector().getPrecision() <= CompactDecimalWriter.MAX_PRECISION ->
            new CompactDecimalWriter(decimal.valueVector());
        case StringWriter string -> VarWidthWriter.strings(string.valueVector());
        case BinaryWriter binary -> VarWidthWriter.binary(binary.valueVector());
        case ArrowFieldWriter spark -> spark;
      };
    }
    return new ArrowWriter(root, fields);
  }

  static DataWriterFactory factory(WriteJob job) {
    return new Factory(job);
  }

  private record Factory(WriteJob job) implements DataWriterFactory {
    @Override
    public DataWriter<InternalRow> createWriter(int partitionId, long taskId) {
      return new ThallusDataWriter(job, partitionId, taskId);
    }
  }

  @Override
  public void write(InternalRow row) {
    writer.write(row);
    if (++pending >= job.conf().batchRows()) {
      flush();
    }
  }

  private void flush() {
    if (pending == 0) {
      return;
    }
    writer.finish();
    ingest.write(root);
    // The ingest holds the sent buffers until the server has them (cma reads them in place later): the next batch
    // gets new buffers instead of overwriting these.
    for (FieldVector vector : root.getFieldVectors()) {
      vector.clear();
    }
    writer.reset();
    pending = 0;
  }

  @Override
  public WriterCommitMessage commit() {
    flush();
    IngestResult result = ingest.finish();
    return new StagedPart(staging.table(), result.rows());
  }

  /** The ingest is cancelled and rolled back: the staging table is never created. */
  @Override
  public void abort() {
    close();
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    try (BufferAllocator a = allocator; ThallusClient c = client; VectorSchemaRoot r = root; ThallusIngest i = ingest) {
      // closed in reverse: the ingest (cancelled if unfinished), the batch, the client, the allocator
    }
  }
}
