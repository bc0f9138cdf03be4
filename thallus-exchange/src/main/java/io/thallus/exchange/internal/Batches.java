package io.thallus.exchange.internal;

import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.arrow.vector.util.VectorSchemaRootAppender;

/** Copies and joins of Arrow batches, each into memory of the allocator it is given. */
public final class Batches {
  private Batches() {}

  /** A copy of rows {@code [from, from + rows)} of {@code source} in {@code allocator}: the caller owns it. */
  public static ArrowRecordBatch copy(VectorSchemaRoot source, int from, int rows, BufferAllocator allocator) {
    try (VectorSchemaRoot slice = from == 0 && rows == source.getRowCount() ? null : source.slice(from, rows);
         VectorSchemaRoot target = VectorSchemaRoot.create(source.getSchema(), allocator)) {
      target.allocateNew();
      VectorSchemaRootAppender.append(false, target, slice == null ? source : slice);
      return new VectorUnloader(target).getRecordBatch();
    }
  }

  /** {@code batches} (of {@code schema}) as one batch in {@code allocator}; the inputs stay the caller's. */
  public static ArrowRecordBatch join(Schema schema, List<ArrowRecordBatch> batches, BufferAllocator allocator,
      BufferAllocator loadAllocator) {
    try (VectorSchemaRoot target = VectorSchemaRoot.create(schema, allocator);
         VectorSchemaRoot loaded = VectorSchemaRoot.create(schema, loadAllocator)) {
      target.allocateNew();
      VectorLoader loader = new VectorLoader(loaded);
      for (ArrowRecordBatch batch : batches) {
        loader.load(batch);
        VectorSchemaRootAppender.append(false, target, loaded);
      }
      return new VectorUnloader(target).getRecordBatch();
    }
  }

  /** A second handle on {@code batch}'s buffers (no copy); both must be closed. */
  public static ArrowRecordBatch retain(ArrowRecordBatch batch) {
    return new ArrowRecordBatch(batch.getLength(), batch.getNodes(), batch.getBuffers(), batch.getBodyCompression(),
        batch.getVariadicBufferCounts(), true);
  }

  /** The bytes of a batch's buffers. */
  public static long bytes(ArrowRecordBatch batch) {
    return batch.computeBodyLength();
  }
}
