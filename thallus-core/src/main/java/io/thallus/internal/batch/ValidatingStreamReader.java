package io.thallus.internal.batch;

import io.thallus.ThallusException;
import java.io.IOException;
import java.io.InputStream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * An Arrow IPC stream reader that runs each batch and dictionary through a {@link BatchValidator} before loading it,
 * for streams that come from a client (rows of parameters). A refused batch is never loaded; the refusal is kept,
 * because a reader DuckDB pulls from reaches it only as text.
 */
public final class ValidatingStreamReader extends ArrowStreamReader {
  private BatchValidator validator;
  private volatile ThallusException refusal;

  public ValidatingStreamReader(InputStream in, BufferAllocator allocator) {
    super(in, allocator);
  }

  /** Why a batch was refused, or null. */
  public ThallusException refusal() {
    return refusal;
  }

  @Override
  protected Schema readSchema() throws IOException {
    Schema schema = super.readSchema();
    validator = new BatchValidator(schema);
    return schema;
  }

  @Override
  protected void loadRecordBatch(ArrowRecordBatch batch) {
    try {
      validator.checkRecords(batch);
    } catch (ThallusException e) {
      batch.close();
      refusal = e;
      throw e;
    }
    super.loadRecordBatch(batch);
  }

  @Override
  protected void loadDictionary(ArrowDictionaryBatch dictionary) {
    try {
      validator.checkDictionary(dictionary);
    } catch (ThallusException e) {
      dictionary.close();
      refusal = e;
      throw e;
    }
    super.loadDictionary(dictionary);
  }
}
