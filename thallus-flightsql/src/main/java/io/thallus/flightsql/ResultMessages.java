package io.thallus.flightsql;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;

/**
 * One batch of a result cut into Flight messages of at most {@code maxBytes} each: gRPC clients refuse a message over
 * their limit (16 MiB by default in ADBC, pyarrow and grpc-java), and the engine sizes batches by rows, so a batch of
 * wide rows (long text, many columns, blobs, lists) can be far larger. A batch that fits goes out whole, as its own
 * buffers; a larger one goes out as row ranges, each a slice of its buffers (Arrow's split-and-transfer shares a
 * buffer where the range starts on a byte boundary and copies only validity bits and offsets otherwise), sized by the
 * batch's bytes a row and cut smaller while a range is still over. A single row over the limit fails the result
 * with RESOURCE_EXHAUSTED naming the limit: a message holds whole rows.
 */
final class ResultMessages implements AutoCloseable {
  /** The default limit: half the 16 MiB that gRPC clients take by default, so headers and estimates have room. */
  static final int DEFAULT_MAX_BYTES = 8 << 20;
  /** The smallest limit taken: below it a message of a few ordinary rows would not fit. */
  static final int MIN_MAX_BYTES = 64 << 10;
  /** A message's header besides its nodes and buffers (schema-free flatbuffer, gRPC and protobuf framing). */
  private static final long HEADER_BYTES = 512;
  /** Header bytes for each field node and buffer the message describes. */
  private static final long BYTES_PER_ENTRY = 16;

  private final VectorSchemaRoot batch;
  private final DecodedBatch decoded;
  private final long maxBytes;
  /** The first row not yet sent. */
  private int next;
  /** How many rows the next range starts by trying (0: the batch has not been measured yet). */
  private int rowsPerMessage;

  /** Takes {@code batch} (closing this closes it); its dictionary columns are decoded as the client reads them. */
  ResultMessages(VectorSchemaRoot batch, DictionaryProvider dictionaries, long maxBytes) {
    this.batch = batch;
    this.maxBytes = maxBytes;
    try {
      this.decoded = DecodedBatch.of(batch, dictionaries);
    } catch (RuntimeException e) {
      batch.close();
      throw e;
    }
  }

  /** The rows as the client receives them (dictionaries decoded): the schema of every message. */
  VectorSchemaRoot root() {
    return decoded.root();
  }

  /** Whether every row has gone out in a message. */
  boolean done() {
    return rowsPerMessage > 0 && next >= decoded.root().getRowCount();
  }

  /** The records of the next message (the caller closes them): the whole batch when it fits, else the next rows. */
  ArrowRecordBatch nextMessage() {
    VectorSchemaRoot root = decoded.root();
    int rows = root.getRowCount();
    if (rowsPerMessage == 0) {
      ArrowRecordBatch whole = new VectorUnloader(root).getRecordBatch();
      long bytes = messageBytes(whole);
      if (bytes <= maxBytes || rows <= 1) {
        rowsPerMessage = Math.max(1, rows);
        next = rows;
        if (bytes > maxBytes) {
          whole.close();
          throw tooLarge(bytes);
        }
        return whole;
      }
      whole.close();
      rowsPerMessage = (int) Math.max(1, Math.min(rows - 1, rows * (double) maxBytes / bytes));
    }
    int count = Math.min(rowsPerMessage, rows - next);
    while (true) {
      ArrowRecordBatch records;
      try (VectorSchemaRoot range = root.slice(next, count)) {
        records = new VectorUnloader(range).getRecordBatch();
      }
      long bytes = messageBytes(records);
      if (bytes <= maxBytes) {
        next += count;
        return records;
      }
      records.close();
      if (count == 1) {
        throw tooLarge(bytes);
      }
      // Rows differ in width: cut the range by how far over it is, and start the next ranges there too.
      count = (int) Math.max(1, Math.min(count - 1, count * 0.9 * maxBytes / bytes));
      rowsPerMessage = count;
    }
  }

  /** The bytes {@code records} take as one Flight message: its body and an estimate of its header. */
  static long messageBytes(ArrowRecordBatch records) {
    return records.computeBodyLength() + HEADER_BYTES
        + BYTES_PER_ENTRY * (records.getNodes().size() + records.getBuffers().size());
  }

  private ThallusException tooLarge(long bytes) {
    return ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, "a row of the result takes " + bytes + " bytes as a "
        + "Flight message, over the Flight SQL server's result message limit of " + maxBytes + " bytes "
        + "(maxResultMessageBytes, thallus serve --flight-sql-max-result-message-bytes); a message holds whole rows, "
        + "so select less of the row or raise the limit, within what the client takes");
  }

  @Override
  public void close() {
    try {
      decoded.close();
    } finally {
      batch.close();
    }
  }
}
