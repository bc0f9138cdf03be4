package io.thallus;

import io.thallus.internal.client.BatchSource;
import io.thallus.internal.client.StreamState;
import io.thallus.spi.BatchContents;
import java.io.IOException;
import java.time.Duration;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.function.Consumer;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The batches of one query, in order, rebuilt on the buffers the transport received (no copy). Use it either way:
 *
 * <ul>
 *   <li>as an iterator: each {@link #next()} returns a new {@link VectorSchemaRoot} that the caller owns and must
 *       close; keeping it keeps its buffers, closing it returns them to the transport;
 *   <li>as an Arrow {@link ArrowReader}: {@link #loadNextBatch()} loads into the one root of
 *       {@link #getVectorSchemaRoot()}, releasing the previous batch (e.g. to hand the stream to Arrow's C Data
 *       export, or to an IPC writer).
 * </ul>
 *
 * Dictionary-encoded columns decode against {@link #getDictionaryVectors()}, which holds the dictionaries of the
 * batch returned last. Closing the stream before its end tells the server to stop.
 */
public final class ThallusStream extends ArrowReader implements Iterator<VectorSchemaRoot> {
  private final BatchSource state;
  private final Schema messageSchema;
  private final Consumer<ThallusStream> onClose;
  private BatchContents pending;
  private boolean ended;
  private long bytesRead;

  ThallusStream(BatchSource state, Schema messageSchema, BufferAllocator allocator,
      Consumer<ThallusStream> onClose) {
    super(allocator);
    this.state = state;
    this.messageSchema = messageSchema;
    this.onClose = onClose;
  }

  /** The result's schema, known before the first batch (dictionary-encoded fields carry their index type). */
  public Schema getSchema() {
    return root().getSchema();
  }

  /**
   * The schema metadata key that marks a statement's update count: what an INSERT, UPDATE, DELETE or DDL statement
   * answers with, one row with one BIGINT column {@code Count}, rather than a result set.
   */
  public static final String UPDATE_COUNT = "thallus.update_count";

  /** Whether this stream is a statement's update count (see {@link #UPDATE_COUNT}), not a query's result. */
  public boolean isUpdateCount() {
    return "true".equals(messageSchema.getCustomMetadata().get(UPDATE_COUNT));
  }

  /** The transport the batches travel on. */
  public String transport() {
    return state.transport();
  }

  /** What the server reported once the stream has ended. */
  public Optional<StreamStats> stats() {
    StreamState.End end = state.end();
    return end == null ? Optional.empty()
        : Optional.of(new StreamStats(end.rows(), end.batches(), end.bytes(), Duration.ofNanos(end.serverNanos()),
            Duration.ofNanos(end.serverCpuNanos())));
  }

  /** Waits (up to the client's timeout) until the next batch or the end is known. */
  @Override
  public boolean hasNext() {
    if (pending != null) {
      return true;
    }
    if (ended) {
      return false;
    }
    pending = state.take();
    if (pending == null) {
      ended = true;
      return false;
    }
    return true;
  }

  /** The next batch as a new root the caller owns (close it). */
  @Override
  public VectorSchemaRoot next() {
    if (!hasNext()) {
      throw new NoSuchElementException("the stream has ended");
    }
    try (BatchContents batch = takePending()) {
      VectorSchemaRoot root = VectorSchemaRoot.create(getSchema(), allocator);
      try {
        new VectorLoader(root).load(batch.records());
      } catch (RuntimeException e) {
        root.close();
        throw e;
      }
      return root;
    }
  }

  @Override
  public boolean loadNextBatch() throws IOException {
    prepareLoadNextBatch();
    if (!hasNext()) {
      return false;
    }
    try (BatchContents batch = takePending()) {
      loadRecordBatch(batch.records());
    }
    return true;
  }

  private BatchContents takePending() {
    root(); // dictionaries exist once the reader is initialized
    BatchContents batch = pending;
    pending = null;
    bytesRead += batch.bufferBytes();
    for (ArrowDictionaryBatch dictionary : batch.dictionaries()) {
      loadDictionary(dictionary);
    }
    return batch;
  }

  private VectorSchemaRoot root() {
    try {
      return getVectorSchemaRoot();
    } catch (IOException e) {
      throw ThallusException.of(StatusCode.INTERNAL, "cannot build the stream's schema: " + e.getMessage(), e);
    }
  }

  @Override
  public long bytesRead() {
    return bytesRead;
  }

  /** Asks the server to stop the query; batches already received are still returned, then CANCELLED is thrown. */
  public void cancel() {
    state.cancel();
  }

  @Override
  protected Schema readSchema() {
    return messageSchema;
  }

  @Override
  protected void closeReadSource() {
    if (pending != null) {
      pending.close();
      pending = null;
    }
    state.close();
    onClose.accept(this);
  }

  /** Frees what the stream holds (not the roots {@link #next()} returned) and stops the query if it is running. */
  @Override
  public void close() {
    try {
      super.close();
    } catch (IOException e) {
      throw ThallusException.of(StatusCode.INTERNAL, "closing stream: " + e.getMessage(), e);
    }
  }
}
