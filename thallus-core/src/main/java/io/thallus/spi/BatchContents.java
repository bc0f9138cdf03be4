package io.thallus.spi;

import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;

/**
 * One batch as Arrow buffers: the dictionary batches its dictionary-encoded columns need, then its records.
 * Whoever holds it owns one reference to every buffer and must close it.
 */
public final class BatchContents implements AutoCloseable {
  private final List<ArrowDictionaryBatch> dictionaries;
  private final ArrowRecordBatch records;
  private boolean closed;

  public BatchContents(List<ArrowDictionaryBatch> dictionaries, ArrowRecordBatch records) {
    this.dictionaries = List.copyOf(dictionaries);
    this.records = records;
  }

  public List<ArrowDictionaryBatch> dictionaries() {
    return dictionaries;
  }

  public ArrowRecordBatch records() {
    return records;
  }

  public int rowCount() {
    return records.getLength();
  }

  /** Bytes in all buffers, dictionaries included. */
  public long bufferBytes() {
    long total = records.computeBodyLength();
    for (ArrowDictionaryBatch dictionary : dictionaries) {
      total += dictionary.computeBodyLength();
    }
    return total;
  }

  /** A second, independent handle on the same buffers (no copy): each handle must be closed. */
  public BatchContents retain() {
    List<ArrowDictionaryBatch> copies = new ArrayList<>(dictionaries.size());
    for (ArrowDictionaryBatch dictionary : dictionaries) {
      copies.add(new ArrowDictionaryBatch(dictionary.getDictionaryId(),
          retainedCopy(dictionary.getDictionary()), dictionary.isDelta()));
    }
    return new BatchContents(copies, retainedCopy(records));
  }

  private static ArrowRecordBatch retainedCopy(ArrowRecordBatch batch) {
    // The constructor retains every buffer once more; the variadic counts go along (view columns need them).
    return new ArrowRecordBatch(batch.getLength(), batch.getNodes(), batch.getBuffers(), batch.getBodyCompression(),
        batch.getVariadicBufferCounts(), true);
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    for (ArrowDictionaryBatch dictionary : dictionaries) {
      dictionary.close();
    }
    records.close();
  }
}
