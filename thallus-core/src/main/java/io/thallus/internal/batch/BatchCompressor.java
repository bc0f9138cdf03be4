package io.thallus.internal.batch;

import io.thallus.BatchCompression;
import io.thallus.spi.BatchContents;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.compression.NoCompressionCodec;
import org.apache.arrow.vector.ipc.message.ArrowBodyCompression;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;

/**
 * Compresses record batches the way Arrow's IPC format does (body compression, one compressed buffer per buffer), for
 * a sender that keeps or sends batches compressed. Each buffer is compressed straight from the source into a scratch
 * area, then the batch's compressed buffers are copied once into one allocation exactly as long as they are: the
 * copy a batch's owner keeps is the compressed bytes, not the codec's worst case. A buffer too small to gain, or one
 * the codec cannot shrink, is stored as it is (Arrow's -1 length). One thread uses an instance at a time.
 */
public final class BatchCompressor implements AutoCloseable {
  /** Buffers shorter than this are stored as they are: a codec frame costs more than it saves on them. */
  private static final int MIN_COMPRESSED = 64;

  private final BatchCompression compression;
  private final BufferCodec codec;
  private final BufferAllocator scratchAllocator;
  private ArrowBuf scratch;

  /** A compressor for {@code compression} (not NONE) whose scratch area comes from {@code scratchAllocator}. */
  public BatchCompressor(BatchCompression compression, BufferAllocator scratchAllocator) {
    this.compression = compression;
    this.codec = BufferCodec.of(compression);
    this.scratchAllocator = scratchAllocator;
  }

  public BatchCompression compression() {
    return compression;
  }

  /** Whether {@code batch}'s body is compressed. */
  public static boolean isCompressed(ArrowRecordBatch batch) {
    ArrowBodyCompression body = batch.getBodyCompression();
    return body != null && body.getCodec() != NoCompressionCodec.COMPRESSION_TYPE;
  }

  /** The contents with every part compressed (parts already compressed kept as they are); closes {@code contents}. */
  public BatchContents compress(BatchContents contents, BufferAllocator allocator) {
    List<ArrowDictionaryBatch> dictionaries = new ArrayList<>(contents.dictionaries().size());
    ArrowRecordBatch records = null;
    try (contents) {
      for (ArrowDictionaryBatch dictionary : contents.dictionaries()) {
        dictionaries.add(new ArrowDictionaryBatch(dictionary.getDictionaryId(),
            compress(dictionary.getDictionary(), allocator), dictionary.isDelta()));
      }
      records = compress(contents.records(), allocator);
      return new BatchContents(dictionaries, records);
    } catch (RuntimeException e) {
      dictionaries.forEach(ArrowDictionaryBatch::close);
      throw e;
    }
  }

  /**
   * A compressed copy of {@code batch} in {@code allocator}: the caller keeps {@code batch} and owns the copy. A batch
   * already compressed comes back as a second handle on the same buffers.
   */
  public ArrowRecordBatch compress(ArrowRecordBatch batch, BufferAllocator allocator) {
    if (isCompressed(batch)) {
      return new ArrowRecordBatch(batch.getLength(), batch.getNodes(), batch.getBuffers(),
          batch.getBodyCompression(), batch.getVariadicBufferCounts(), true);
    }
    List<ArrowBuf> buffers = batch.getBuffers();
    int count = buffers.size();
    long worst = 0;
    for (ArrowBuf buffer : buffers) {
      int length = Math.toIntExact(buffer.readableBytes());
      worst = CodecBuffers.align(worst + CodecBuffers.PREFIX_BYTES + Math.max(length, codec.maxCompressedLength(length)));
    }
    ArrowBuf area = scratch(worst);
    long[] starts = new long[count];
    long[] lengths = new long[count];
    long at = 0;
    for (int i = 0; i < count; i++) {
      ArrowBuf buffer = buffers.get(i);
      int length = Math.toIntExact(buffer.readableBytes());
      starts[i] = at;
      lengths[i] = CodecBuffers.PREFIX_BYTES + write(buffer, length, area, at);
      at = CodecBuffers.align(at + lengths[i]);
    }
    List<ArrowBuf> slices = new ArrayList<>(count);
    try (ArrowBuf whole = allocator.buffer(Math.max(at, 1))) {
      whole.setBytes(0, area, 0, at);
      for (int i = 0; i < count; i++) {
        slices.add(whole.slice(starts[i], lengths[i]));
      }
      // The batch takes its own reference to each slice; the allocation's own goes with the try.
      return new ArrowRecordBatch(batch.getLength(), batch.getNodes(), slices,
          new ArrowBodyCompression(compression.arrowCodec(), CodecBuffers.BUFFER_METHOD),
          batch.getVariadicBufferCounts(), true);
    }
  }

  /** Writes one buffer's compressed form (after its prefix) at {@code at} of the area; answers its bytes. */
  private int write(ArrowBuf buffer, int length, ArrowBuf area, long at) {
    long body = at + CodecBuffers.PREFIX_BYTES;
    if (length == 0) {
      // Arrow's Java reader wants the prefix even for an empty buffer.
      CodecBuffers.setPrefix(area, at, 0);
      return 0;
    }
    if (length >= MIN_COMPRESSED) {
      int room = codec.maxCompressedLength(length);
      ByteBuffer source = CodecBuffers.readable(buffer, 0, length);
      ByteBuffer target = CodecBuffers.writable(area, body, room);
      int written = codec.compress(source, 0, length, target, 0, room);
      if (written < length) {
        CodecBuffers.writeBack(target, area, body, written);
        CodecBuffers.setPrefix(area, at, length);
        return written;
      }
    }
    CodecBuffers.setPrefix(area, at, CodecBuffers.STORED);
    area.setBytes(body, buffer, 0, length);
    return length;
  }

  private ArrowBuf scratch(long bytes) {
    if (scratch == null || scratch.capacity() < bytes) {
      if (scratch != null) {
        scratch.close();
        scratch = null;
      }
      scratch = scratchAllocator.buffer(Math.max(bytes, 64 << 10));
    }
    return scratch;
  }

  /** Frees the scratch area. Idempotent. */
  @Override
  public void close() {
    if (scratch != null) {
      scratch.close();
      scratch = null;
    }
  }
}
