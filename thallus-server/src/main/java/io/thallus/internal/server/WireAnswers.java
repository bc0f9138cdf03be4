package io.thallus.internal.server;

import io.thallus.StatementDescription;
import io.thallus.ThallusStream;
import io.thallus.engine.QueryResult;
import io.thallus.engine.UpdateCounts;
import io.thallus.internal.protocol.StatementDescriptions;
import io.thallus.spi.BatchContents;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The engine's typed answers in the form a stream sends them: update counts as one BIGINT column, one row per run,
 * with the schema marked {@link ThallusStream#UPDATE_COUNT}; a statement description as
 * {@link StatementDescriptions} lays it out.
 */
final class WireAnswers {
  private WireAnswers() {}

  /** {@code result} itself when it has rows; its update counts as one batch when it has none. */
  static QueryResult of(QueryResult result, BufferAllocator allocator) {
    if (result.updateCounts().isEmpty()) {
      return result;
    }
    UpdateCounts counts = result.updateCounts().get();
    result.close();
    Field field = new Field("Count", FieldType.nullable(new ArrowType.Int(64, true)), null);
    Schema schema = new Schema(List.of(field), Map.of(ThallusStream.UPDATE_COUNT, "true"));
    try (BigIntVector vector = new BigIntVector(field, allocator)) {
      vector.allocateNew(counts.runs());
      for (int i = 0; i < counts.runs(); i++) {
        vector.set(i, counts.count(i));
      }
      vector.setValueCount(counts.runs());
      try (VectorSchemaRoot root = new VectorSchemaRoot(List.of(field), List.of(vector), counts.runs())) {
        return new OneBatch(schema, new BatchContents(List.of(), new VectorUnloader(root).getRecordBatch()));
      }
    }
  }

  static QueryResult of(StatementDescription description, BufferAllocator allocator) {
    try (VectorSchemaRoot row = StatementDescriptions.row(description, allocator)) {
      return new OneBatch(row.getSchema(), new BatchContents(List.of(), new VectorUnloader(row).getRecordBatch()));
    }
  }

  /** A result of one batch, made in memory. */
  private static final class OneBatch implements QueryResult {
    private final Schema schema;
    private BatchContents only;

    OneBatch(Schema schema, BatchContents only) {
      this.schema = schema;
      this.only = only;
    }

    @Override
    public Schema schema() {
      return schema;
    }

    @Override
    public synchronized BatchContents next() {
      BatchContents next = only;
      only = null;
      return next;
    }

    @Override
    public void cancel() {}

    @Override
    public synchronized void close() {
      if (only != null) {
        only.close();
        only = null;
      }
    }
  }
}
