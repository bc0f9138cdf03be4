package io.thallus.spark;

import io.thallus.ThallusClient;
import io.thallus.ThallusStream;
import java.util.List;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * Reads one partition's stream. Each Arrow batch the client received is handed to Spark as a ColumnarBatch of
 * {@link ArrowColumnVector}s over the received buffers (Spark 4.2 uses the same Arrow, 19.0.0, so nothing is
 * converted), fixed-width columns as {@link FixedWidthColumnVector}s read at their buffers' addresses. A batch stays valid until Spark asks for the next one, which is when its buffers go back to the
 * transport. The task's completion listener closes the reader too, so a task that fails or stops early (a limit)
 * still releases its batch, stream and connection.
 */
final class ColumnarReader implements PartitionReader<ColumnarBatch> {
  private final ThallusClient client;
  private final ThallusStream stream;
  private final int columns;
  private VectorSchemaRoot current;
  private ColumnarBatch batch;
  private boolean closed;

  private ColumnarReader(ThallusClient client, ThallusStream stream, int columns) {
    this.client = client;
    this.stream = stream;
    this.columns = columns;
  }

  static ColumnarReader open(ThallusInputPartition partition) {
    ThallusClient client = Connector.connectForRead(partition.conf(), partition.server());
    ColumnarReader reader;
    try {
      ThallusStream stream = partition.exactSqlOrNull() == null
          ? client.query(Connector.request(partition.conf(), partition.sql()))
          : exactAfterOverflow(client, partition);
      reader = new ColumnarReader(client, stream, partition.columns());
    } catch (RuntimeException e) {
      client.close();
      throw e;
    }
    TaskContext task = TaskContext.get();
    if (task != null) {
      task.addTaskCompletionListener(new org.apache.spark.util.TaskCompletionListener() {
        @Override
        public void onTaskCompletion(TaskContext context) {
          reader.close();
        }
      });
    }
    return reader;
  }

  /**
   * An aggregate in DuckDB's narrower decimal types sends nothing before it has read its whole input, so an overflow
   * shows at its first batch: the partition then runs the aggregate in Spark's types, which overflows only where
   * Spark would.
   */
  private static ThallusStream exactAfterOverflow(ThallusClient client, ThallusInputPartition partition) {
    ThallusStream stream = null;
    try {
      // DuckDB reports the overflow when it opens the query (constants) or at the first batch (data).
      stream = client.query(Connector.request(partition.conf(), partition.sql()));
      stream.hasNext();
      return stream;
    } catch (io.thallus.ThallusException e) {
      if (stream != null) {
        stream.close();
      }
      if (e.getMessage() == null || !e.getMessage().contains("Overflow")) {
        throw e;
      }
    }
    return client.query(Connector.request(partition.conf(), partition.exactSqlOrNull()));
  }

  @Override
  public synchronized boolean next() {
    releaseCurrent();
    if (closed || !stream.hasNext()) {
      return false;
    }
    current = stream.next();
    List<FieldVector> vectors = current.getFieldVectors();
    // The stream may carry a placeholder column (a scan of no columns still needs its rows): Spark gets only the
    // columns it asked for.
    ColumnVector[] wrapped = new ColumnVector[columns];
    for (int i = 0; i < columns; i++) {
      wrapped[i] = FixedWidthColumnVector.of(vectors.get(i));
    }
    batch = new ColumnarBatch(wrapped, current.getRowCount());
    return true;
  }

  @Override
  public synchronized ColumnarBatch get() {
    if (batch == null) {
      throw new IllegalStateException("get() before next() returned true");
    }
    return batch;
  }

  private void releaseCurrent() {
    batch = null;
    if (current != null) {
      current.close();
      current = null;
    }
  }

  /** Idempotent: Spark closes the reader, and the task listener closes it again as a safety net. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      releaseCurrent();
      stream.close();
    } finally {
      client.close();
    }
  }
}
