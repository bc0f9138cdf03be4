package io.thallus;

import io.thallus.internal.batch.BatchValidator;
import io.thallus.internal.client.IngestState;
import io.thallus.spi.BatchContents;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.util.DictionaryUtility;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Batches on their way into a table: {@link #write} each, then {@link #finish} for the rows written. All rows or
 * none: the server writes them in one transaction, and closing before {@code finish} (or any failure) leaves the
 * table as it was. Batches move on the connection's transport in the write direction (shm, cma, tcp: without
 * serializing; ipc: as Arrow IPC), as many in flight as the server grants. One thread writes at a time.
 *
 * <pre>{@code
 * try (ThallusIngest ingest = client.ingest(IngestRequest.of("trips", IngestMode.CREATE), root.getSchema())) {
 *   ingest.write(root);            // as often as there are batches
 *   IngestResult written = ingest.finish();
 * }
 * }</pre>
 */
public final class ThallusIngest implements AutoCloseable {
  private final IngestState state;
  private final Schema schema;
  private final DictionaryProvider dictionaries;
  private final long startNanos = System.nanoTime();
  private final Runnable onClose;
  /** Checks each batch before its bytes are read for sending; made at the first. */
  private BatchValidator validator;
  private long batches;
  private long bytes;
  private boolean closed;

  ThallusIngest(IngestState state, Schema schema, DictionaryProvider dictionaries, Runnable onClose) {
    this.state = state;
    this.schema = schema;
    this.dictionaries = dictionaries;
    this.onClose = onClose;
  }

  public Schema schema() {
    return schema;
  }

  /**
   * Sends the root's rows as one batch (or several, where a batch would not fit in one frame of a transport that
   * carries batches inside frames). The root stays the caller's, and its schema must be the ingest's. Its buffers
   * are sent as they are: with cma the server reads them after this returns, so give the root new buffers for the
   * next batch (load it, or {@code allocateNew}) rather than overwrite these in place before {@link #finish}.
   */
  public void write(VectorSchemaRoot root) {
    if (!root.getSchema().equals(schema)) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "the batch's schema " + root.getSchema()
          + " is not the ingest's " + schema);
    }
    if (root.getRowCount() == 0) {
      return;
    }
    BatchContents contents = contents(root);
    boolean fits;
    try {
      // A root whose offsets or lengths lie would have this process read and send memory outside its buffers.
      if (validator == null) {
        validator = new BatchValidator(wireSchema(schema, dictionaries));
      }
      validator.check(contents);
      long frame = state.frameBytes(contents);
      // A little room for the frame's type and lengths besides the header and body counted.
      fits = frame + 64 <= state.maxFrameBytes();
      if (!fits && (root.getRowCount() == 1 || state.placesBodies())) {
        // Fewer rows would not make it fit: a frame over the server's limit would cost the whole connection.
        throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "a batch of " + root.getRowCount() + " row(s) and "
            + root.getFieldVectors().size() + " column(s) needs a frame of " + frame + " bytes, over the server's "
            + "frame limit of " + state.maxFrameBytes() + " bytes");
      }
    } catch (RuntimeException e) {
      contents.close();
      throw e;
    }
    if (fits) {
      batches++;
      bytes += contents.bufferBytes();
      state.send(contents);
      return;
    }
    contents.close();
    int half = root.getRowCount() / 2;
    try (VectorSchemaRoot first = root.slice(0, half)) {
      write(first);
    }
    try (VectorSchemaRoot second = root.slice(half, root.getRowCount() - half)) {
      write(second);
    }
  }

  /**
   * Sends one record batch as it is: its buffers, and its body compression if it has one (Arrow's {@code LZ4_FRAME}
   * or {@code ZSTD}, as Arrow IPC lays a compressed body out), so a producer that keeps batches compressed sends
   * them without recompressing; the server decompresses, within its memory budget, and checks it. For an ingest
   * whose schema has no dictionary-encoded column. The batch stays the caller's (the send takes its own reference).
   * An uncompressed batch is checked here first, as {@link #write(VectorSchemaRoot)} checks a root; a batch that does
   * not fit one frame is refused rather than split.
   */
  public void write(org.apache.arrow.vector.ipc.message.ArrowRecordBatch batch) {
    if (schema.getFields().stream().anyMatch(ThallusIngest::encoded)) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "an ingest with dictionary-encoded columns takes roots, "
          + "not record batches");
    }
    if (batch.getLength() == 0) {
      return;
    }
    BatchContents contents = new BatchContents(List.of(), new org.apache.arrow.vector.ipc.message.ArrowRecordBatch(
        batch.getLength(), batch.getNodes(), batch.getBuffers(), batch.getBodyCompression(),
        batch.getVariadicBufferCounts(), true));
    try {
      if (!io.thallus.internal.batch.BatchCompressor.isCompressed(contents.records())) {
        if (validator == null) {
          validator = new BatchValidator(schema);
        }
        validator.check(contents);
      }
      long frame = state.frameBytes(contents);
      if (frame + 64 > state.maxFrameBytes()) {
        throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "a record batch of " + batch.getLength()
            + " row(s) needs a frame of " + frame + " bytes, over the server's frame limit of "
            + state.maxFrameBytes() + " bytes");
      }
    } catch (RuntimeException e) {
      contents.close();
      throw e;
    }
    batches++;
    bytes += contents.bufferBytes();
    state.send(contents);
  }

  /**
   * The root's buffers and those of the dictionaries its columns use, at any depth (a list of categories, a
   * dictionary whose values are themselves encoded): every batch carries its dictionaries.
   */
  private BatchContents contents(VectorSchemaRoot root) {
    List<ArrowDictionaryBatch> used = new ArrayList<>();
    try {
      java.util.Set<Long> seen = new java.util.HashSet<>();
      for (Field field : root.getSchema().getFields()) {
        addDictionaries(field, seen, used);
      }
      io.thallus.internal.batch.UnloadCheck.check(root.getFieldVectors());
      return new BatchContents(used, new VectorUnloader(root).getRecordBatch());
    } catch (IndexOutOfBoundsException e) {
      // Unloading reads each column's last offset: one past a buffer too short for the row count.
      used.forEach(ArrowDictionaryBatch::close);
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "the batch's buffers are too short for its "
          + root.getRowCount() + " rows: " + e.getMessage(), e);
    } catch (RuntimeException e) {
      used.forEach(ArrowDictionaryBatch::close);
      throw e;
    }
  }

  /** Adds the dictionary batches {@code field} and its children use (each once) to {@code used}. */
  private void addDictionaries(Field field, java.util.Set<Long> seen, List<ArrowDictionaryBatch> used) {
    DictionaryEncoding encoding = field.getDictionary();
    if (encoding == null) {
      for (Field child : field.getChildren()) {
        addDictionaries(child, seen, used);
      }
      return;
    }
    if (!seen.add(encoding.getId())) {
      return;
    }
    Dictionary dictionary = dictionaries == null ? null : dictionaries.lookup(encoding.getId());
    if (dictionary == null) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "column " + field.getName() + " is dictionary-"
          + "encoded (id " + encoding.getId() + ") and no dictionary was given for it");
    }
    FieldVector values = dictionary.getVector();
    // The values may use dictionaries of their own.
    addDictionaries(values.getField(), seen, used);
    io.thallus.internal.batch.UnloadCheck.check(List.of(values));
    // Not closed: closing a root closes its vectors, and this one is the dictionary's own (the next batch may
    // need it again, and its owner frees it). The unloaded batch holds its own references to the buffers.
    VectorSchemaRoot one = new VectorSchemaRoot(List.of(values.getField()), List.of(values), values.getValueCount());
    used.add(new ArrowDictionaryBatch(encoding.getId(), new VectorUnloader(one).getRecordBatch(), false));
  }

  /**
   * The schema as it travels (Arrow IPC's form: a dictionary-encoded column has its values' type), with the
   * dictionaries' schemas taken from {@code dictionaries}.
   */
  static Schema wireSchema(Schema schema, DictionaryProvider dictionaries) {
    boolean encoded = schema.getFields().stream().anyMatch(ThallusIngest::encoded);
    if (!encoded) {
      return schema;
    }
    if (dictionaries == null) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "the schema has dictionary-encoded columns and no "
          + "dictionaries were given");
    }
    java.util.Set<Long> ids = new java.util.HashSet<>();
    List<Field> fields = new ArrayList<>();
    for (Field field : schema.getFields()) {
      fields.add(DictionaryUtility.toMessageFormat(field, dictionaries, ids));
    }
    return new Schema(fields, schema.getCustomMetadata());
  }

  /** Whether the field, or a field inside it (a list of categories), is dictionary-encoded. */
  private static boolean encoded(Field field) {
    return field.getDictionary() != null || field.getChildren().stream().anyMatch(ThallusIngest::encoded);
  }

  /** Sends every batch {@code reader} yields; returns the rows sent. */
  public long write(ArrowReader reader) {
    long rows = 0;
    try {
      while (reader.loadNextBatch()) {
        VectorSchemaRoot root = reader.getVectorSchemaRoot();
        rows += root.getRowCount();
        write(root);
      }
    } catch (IOException e) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "reading the batches to ingest failed: "
          + e.getMessage(), e);
    }
    return rows;
  }

  /** Says the last batch is sent and waits for the commit: what the table received. */
  public IngestResult finish() {
    IngestState.End end = state.finish();
    return new IngestResult(end.rows(), batches, bytes, Duration.ofNanos(end.serverNanos()), state.transport());
  }

  /** Time since the ingest began, for progress reports. */
  public Duration elapsed() {
    return Duration.ofNanos(System.nanoTime() - startNanos);
  }

  /** Bytes of Arrow buffers sent so far. */
  public long bytesSent() {
    return bytes;
  }

  /** Cancels the ingest if it has not finished (the server rolls it back), and waits for the server to stop. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      state.close();
    } finally {
      onClose.run();
    }
  }
}
