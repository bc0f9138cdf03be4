package io.thallus.exchange.internal;

import io.thallus.internal.batch.BatchCompressor;
import io.thallus.internal.batch.BatchDecompressor;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
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

  /**
   * A copy of {@code source}'s rows in {@code allocator}, the caller's to close: one copy of each buffer, exactly as
   * long as its data (no growth by appending, no default capacity).
   */
  public static ArrowRecordBatch copy(VectorSchemaRoot source, BufferAllocator allocator) {
    try (ArrowRecordBatch shared = new VectorUnloader(source).getRecordBatch()) {
      List<ArrowBuf> copies = new ArrayList<>(shared.getBuffers().size());
      try {
        for (ArrowBuf buffer : shared.getBuffers()) {
          long length = buffer.readableBytes();
          ArrowBuf copy = allocator.buffer(length);
          copy.setBytes(0, buffer, buffer.readerIndex(), length);
          copy.writerIndex(length);
          copies.add(copy);
        }
        // The batch takes its own reference to each copy; ours go in the finally.
        return new ArrowRecordBatch(shared.getLength(), shared.getNodes(), copies, shared.getBodyCompression(),
            shared.getVariadicBufferCounts(), true);
      } finally {
        copies.forEach(ArrowBuf::close);
      }
    }
  }

  /**
   * {@code source}'s rows compressed by {@code compressor} into {@code allocator}, the caller's to close: each buffer
   * compressed straight from the root's own buffers (no plain copy first), the result one allocation exactly as long
   * as the compressed bytes.
   */
  public static ArrowRecordBatch compress(VectorSchemaRoot source, BatchCompressor compressor,
      BufferAllocator allocator) {
    try (ArrowRecordBatch shared = new VectorUnloader(source).getRecordBatch()) {
      return compressor.compress(shared, allocator);
    }
  }

  /** Whether {@code batch}'s body is compressed. */
  public static boolean isCompressed(ArrowRecordBatch batch) {
    return BatchCompressor.isCompressed(batch);
  }

  /**
   * The bytes of a batch's buffers once decompressed (each compressed buffer's declared length; the buffers' bytes
   * for a batch that is not compressed).
   */
  public static long plainBytes(ArrowRecordBatch batch) {
    return BatchDecompressor.plainBytes(batch);
  }

  /**
   * Rows {@code [from, from + rows)} of {@code source} sharing its buffers where Arrow can (fixed-width values, data of
   * strings; offsets and unaligned validity bits are copied), in the source's allocator; the caller owns it.
   */
  public static ArrowRecordBatch slice(VectorSchemaRoot source, int from, int rows) {
    try (VectorSchemaRoot slice = source.slice(from, rows)) {
      return new VectorUnloader(slice).getRecordBatch();
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
