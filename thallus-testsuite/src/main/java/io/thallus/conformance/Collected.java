package io.thallus.conformance;

import io.thallus.ThallusStream;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;

/** A whole result read into plain values, with its schema and batch count. */
public record Collected(Schema schema, List<List<Object>> rows, int batches) {

  /** Reads every batch through the iterator API, closing each root after reading it. */
  public static Collected fromIterator(ThallusStream stream) {
    List<List<Object>> rows = new ArrayList<>();
    int batches = 0;
    while (stream.hasNext()) {
      try (VectorSchemaRoot root = stream.next()) {
        Values.appendRows(root, stream, rows);
        batches++;
      }
    }
    return new Collected(stream.getSchema(), rows, batches);
  }

  /** Reads every batch through the ArrowReader API. */
  public static Collected fromReader(ThallusStream stream) throws java.io.IOException {
    List<List<Object>> rows = new ArrayList<>();
    int batches = 0;
    while (stream.loadNextBatch()) {
      Values.appendRows(stream.getVectorSchemaRoot(), stream, rows);
      batches++;
    }
    return new Collected(stream.getSchema(), rows, batches);
  }
}
