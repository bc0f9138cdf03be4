package io.thallus.duckdb;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.spi.BatchContents;
import io.thallus.engine.QueryResult;
import java.sql.Statement;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.arrow.vector.util.DictionaryUtility;
import org.duckdb.DuckDBResultSet;

/**
 * One statement's result in a session: batches read from DuckDB's Arrow export as the stream asks for them, or from
 * memory once another statement of the session needed the connection ({@link #readRest}).
 */
final class DuckDBResult implements QueryResult {
  private final DuckDBSession session;
  private final Statement statement;
  private final DuckDBResultSet resultSet;
  private final ArrowReader reader;
  /** The stream's budget, where each batch is accounted once imported. */
  private final BufferAllocator allocator;
  /** Where {@link #reader} imports DuckDB's batches ({@link ImportedBatches}); finished after it. */
  private final ImportedBatches.Importing importing;
  private final Schema schema;
  /** Batches read ahead for another statement's sake, in order. Guarded by the session's lock. */
  private final ArrayDeque<BatchContents> readAhead = new ArrayDeque<>();
  private final List<AutoCloseable> alsoClose = new ArrayList<>();
  // Guarded by the session's lock.
  private boolean readerDone;
  private RuntimeException readFailure;
  private long largestBatch;
  private boolean closed;
  private volatile boolean cancelled;

  /**
   * {@code spec} may ask for DuckDB's type names where Arrow's do not tell ({@link EngineTypeNames}); then
   * {@code offsetColumns} are the TIME WITH TIME ZONE columns sent as text ({@link OffsetTimeText}).
   */
  DuckDBResult(DuckDBSession session, Statement statement, DuckDBResultSet resultSet, ArrowReader reader,
      BufferAllocator allocator, ImportedBatches.Importing importing, io.thallus.engine.QuerySpec spec,
      java.util.Set<Integer> offsetColumns) {
    this.session = session;
    this.statement = statement;
    this.resultSet = resultSet;
    this.reader = reader;
    this.allocator = allocator;
    this.importing = importing;
    this.schema = EngineTypeNames.asked(spec) ? EngineTypeNames.annotate(messageSchema(reader), resultSet,
        offsetColumns)
        : messageSchema(reader);
  }

  /** The schema of DuckDB's Arrow export in IPC message form: a dictionary field has its value type and encoding. */
  static Schema messageSchema(ArrowReader reader) {
    try {
      Schema inMemory = reader.getVectorSchemaRoot().getSchema();
      List<Field> fields = new ArrayList<>();
      for (Field field : inMemory.getFields()) {
        fields.add(DictionaryUtility.toMessageFormat(field, reader, new HashSet<>()));
      }
      return new Schema(fields, inMemory.getCustomMetadata());
    } catch (java.io.IOException e) {
      throw ThallusException.of(StatusCode.INTERNAL, "DuckDB gave no Arrow schema: " + e.getMessage(), e);
    }
  }

  /** Also closes {@code resource} (a one-query session) when this result closes. */
  DuckDBResult closing(AutoCloseable resource) {
    alsoClose.add(resource);
    return this;
  }

  @Override
  public Schema schema() {
    return schema;
  }

  @Override
  public BatchContents next() {
    session.acquire(() -> cancelled);
    try {
      if (!readAhead.isEmpty()) {
        return readAhead.poll();
      }
      if (readFailure != null) {
        throw readFailure;
      }
      if (readerDone || closed) {
        return null;
      }
      return read();
    } finally {
      session.release();
    }
  }

  /**
   * Reads what DuckDB has left of this result into memory, so another statement can run on the connection. Each
   * batch is read only when the client's budget has room for it (a batch that does not fit fails halfway through
   * Arrow's import): a result too large to hold stops the new statement, not this one. Called under the lock.
   */
  void readRest() {
    while (!readerDone && readFailure == null) {
      long needed = Math.max(largestBatch, 1);
      if (allocator.getHeadroom() < needed) {
        throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, "another result of this session is still being "
            + "read and the rest of it does not fit in this client's memory budget; read it to the end or close "
            + "it before running another statement");
      }
      try {
        BatchContents batch = read();
        if (batch != null) {
          readAhead.add(batch);
        }
      } catch (RuntimeException e) {
        // The earlier result failed (or was cancelled): its stream learns so; the new statement goes on.
        readFailure = e;
        stopReading();
      }
    }
  }

  /** The next batch from DuckDB, or null at the end. Called under the lock. */
  private BatchContents read() {
    try {
      BatchContents batch = session.calling(this, () -> reader.loadNextBatch() ? unload() : null);
      if (batch == null) {
        stopReading();
      } else {
        largestBatch = Math.max(largestBatch, batch.bufferBytes());
      }
      return batch;
    } catch (java.io.IOException | RuntimeException e) {
      stopReading();
      for (Throwable cause = e; cause != null; cause = cause.getCause()) {
        if (cause instanceof org.apache.arrow.memory.OutOfMemoryException && e instanceof RuntimeException runtime) {
          // The server's memory budget, not the query, stopped this: the server says so.
          throw runtime;
        }
      }
      if (cancelled) {
        throw ThallusException.of(StatusCode.CANCELLED, "the query was cancelled", e);
      }
      String message = e.getMessage() == null ? e.toString() : e.getMessage();
      throw DuckDBErrors.classify(message, e);
    }
  }

  private BatchContents unload() throws java.io.IOException {
    VectorSchemaRoot root = reader.getVectorSchemaRoot();
    // Unloading retains the buffers: the batch outlives the reader's next load, which releases the root's.
    ArrowRecordBatch records = new VectorUnloader(root).getRecordBatch();
    List<ArrowDictionaryBatch> dictionaries = new ArrayList<>();
    for (Field field : root.getSchema().getFields()) {
      collectDictionaries(field, dictionaries);
    }
    return ImportedBatches.moveTo(new BatchContents(dictionaries, records), allocator);
  }

  private void collectDictionaries(Field field, List<ArrowDictionaryBatch> out) {
    if (field.getDictionary() != null) {
      long id = field.getDictionary().getId();
      Dictionary dictionary = reader.lookup(id);
      if (dictionary != null && out.stream().noneMatch(d -> d.getDictionaryId() == id)) {
        FieldVector vector = dictionary.getVector();
        VectorSchemaRoot single = new VectorSchemaRoot(List.of(vector.getField()), List.of(vector),
            vector.getValueCount());
        out.add(new ArrowDictionaryBatch(id, new VectorUnloader(single).getRecordBatch(), false));
      }
    }
    for (Field child : field.getChildren()) {
      collectDictionaries(child, out);
    }
  }

  /** Whether this result reads from {@code other}. */
  boolean reads(Statement other) {
    return statement == other && !readerDone;
  }

  /** DuckDB is done with this result: the connection is free for the session's next statement. Under the lock. */
  private void stopReading() {
    if (readerDone) {
      return;
    }
    readerDone = true;
    DuckDBEngine.closeQuietly(reader);
    importing.finish();
    DuckDBEngine.closeQuietly(resultSet);
    session.streamingEnded(this);
    session.release(statement);
  }

  @Override
  public void cancel() {
    cancelled = true;
    if (session == null) {
      return;
    }
    // The statement has finished executing (a result exists): only a read can be running, and only the session's
    // interrupt reaches it. Cancelling the statement would reach its next run, if the session keeps it.
    session.interrupt(this);
  }

  @Override
  public void close() {
    try {
      if (session != null) {
        session.acquireForClose();
        try {
          closed = true;
          stopReading();
        } finally {
          session.release();
        }
      }
      BatchContents batch;
      while ((batch = readAhead.poll()) != null) {
        batch.close();
      }
    } finally {
      for (AutoCloseable resource : alsoClose) {
        DuckDBEngine.closeQuietly(resource);
      }
    }
  }
}
