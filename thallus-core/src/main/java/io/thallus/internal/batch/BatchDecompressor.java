package io.thallus.internal.batch;

import io.thallus.BatchCompression;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.spi.BatchContents;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.OutOfMemoryException;
import org.apache.arrow.vector.compression.NoCompressionCodec;
import org.apache.arrow.vector.ipc.message.ArrowBodyCompression;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;

/**
 * Turns a received batch whose body is compressed (Arrow's body compression) back into plain buffers, before anything
 * checks or reads it; every door that takes batches runs it. The bytes are the peer's and may be hostile, so:
 *
 * <ul>
 *   <li>every buffer's framing is checked first: at least its 8-byte length prefix, a length of 0 or more or -1
 *       (stored as is), and no more than the codec could honestly make of its bytes;
 *   <li>the whole batch's decompressed bytes are bounded before any memory is taken: at most the receiver's bound
 *       (its memory budget's headroom, and the bound its owner sets), else RESOURCE_EXHAUSTED naming both;
 *   <li>the codecs are the safe ones (lz4-java's safe decompressor, zstd's bounded call): each buffer must make
 *       exactly the bytes it declared, writing nowhere else, else INVALID_ARGUMENT naming the buffer and the fault;
 *   <li>on any failure everything taken is freed and the received batch closed.
 * </ul>
 */
public final class BatchDecompressor {
  private BatchDecompressor() {}

  /** Whether any part of {@code contents} is compressed. */
  public static boolean isCompressed(BatchContents contents) {
    if (BatchCompressor.isCompressed(contents.records())) {
      return true;
    }
    for (ArrowDictionaryBatch dictionary : contents.dictionaries()) {
      if (BatchCompressor.isCompressed(dictionary.getDictionary())) {
        return true;
      }
    }
    return false;
  }

  /**
   * {@code contents} with every part decompressed into {@code allocator}: the same object when nothing is compressed,
   * else new contents (and {@code contents} closed). On failure {@code contents} is closed and nothing is held.
   * {@code bound} caps the batch's decompressed bytes besides the allocator's headroom; {@code budgetName} names the
   * budget in the error.
   */
  public static BatchContents decompress(BatchContents contents, BufferAllocator allocator, long bound,
      String budgetName, String what) {
    if (!isCompressed(contents)) {
      return contents;
    }
    try (contents) {
      List<ArrowRecordBatch> parts = new ArrayList<>(contents.dictionaries().size() + 1);
      List<String> names = new ArrayList<>();
      for (ArrowDictionaryBatch dictionary : contents.dictionaries()) {
        parts.add(dictionary.getDictionary());
        names.add("dictionary " + dictionary.getDictionaryId());
      }
      parts.add(contents.records());
      names.add("the records");
      long[][] declared = new long[parts.size()][];
      long total = 0;
      for (int p = 0; p < parts.size(); p++) {
        declared[p] = declared(parts.get(p), what + ", " + names.get(p));
        for (long length : declared[p]) {
          total = CodecBuffers.align(total + length);
        }
      }
      long headroom = allocator.getHeadroom();
      long limit = Math.min(bound, headroom);
      if (total > limit) {
        throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, what + " would decompress to " + total
            + " bytes, over the bound of " + limit + " bytes (" + budgetName + ": " + headroom + " bytes free, at most "
            + bound + " per batch)");
      }
      ArrowBuf whole;
      try {
        whole = allocator.buffer(Math.max(total, 1));
      } catch (OutOfMemoryException e) {
        throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, budgetName + " has no room for " + what
            + " decompressed (" + total + " bytes)", e);
      }
      List<ArrowDictionaryBatch> dictionaries = new ArrayList<>();
      try (whole) {
        long[] at = {0};
        for (int p = 0; p < parts.size() - 1; p++) {
          ArrowDictionaryBatch dictionary = contents.dictionaries().get(p);
          dictionaries.add(new ArrowDictionaryBatch(dictionary.getDictionaryId(),
              plain(parts.get(p), declared[p], whole, at, what + ", " + names.get(p)), dictionary.isDelta()));
        }
        int last = parts.size() - 1;
        ArrowRecordBatch records = plain(parts.get(last), declared[last], whole, at, what + ", " + names.get(last));
        return new BatchContents(dictionaries, records);
      } catch (RuntimeException e) {
        dictionaries.forEach(ArrowDictionaryBatch::close);
        throw e;
      }
    }
  }

  /**
   * The bytes {@code batch}'s buffers take decompressed, as their prefixes declare them (the buffers' bytes when it is
   * not compressed): for a sender's own batches, whose prefixes it wrote; a received batch is checked by
   * {@link #decompress}.
   */
  public static long plainBytes(ArrowRecordBatch batch) {
    if (!BatchCompressor.isCompressed(batch)) {
      return batch.computeBodyLength();
    }
    long total = 0;
    for (ArrowBuf buffer : batch.getBuffers()) {
      long size = buffer.readableBytes();
      if (size >= CodecBuffers.PREFIX_BYTES) {
        long declared = CodecBuffers.prefix(buffer, 0);
        total += declared == CodecBuffers.STORED ? size - CodecBuffers.PREFIX_BYTES : Math.max(declared, 0);
      }
    }
    return total;
  }

  /** Each buffer's uncompressed length, from its prefix, after checking the prefix and the codec's ratio. */
  private static long[] declared(ArrowRecordBatch batch, String what) {
    List<ArrowBuf> buffers = batch.getBuffers();
    long[] lengths = new long[buffers.size()];
    if (!BatchCompressor.isCompressed(batch)) {
      for (int i = 0; i < lengths.length; i++) {
        lengths[i] = buffers.get(i).readableBytes();
      }
      return lengths;
    }
    ArrowBodyCompression body = batch.getBodyCompression();
    if (body.getMethod() != CodecBuffers.BUFFER_METHOD) {
      throw invalid(what + " uses body compression method " + body.getMethod()
          + "; only BUFFER (0) exists");
    }
    BufferCodec codec = codec(body.getCodec(), what);
    for (int i = 0; i < lengths.length; i++) {
      long size = buffers.get(i).readableBytes();
      if (size == 0) {
        // An empty buffer with no prefix at all (Arrow C++ writes these): empty.
        continue;
      }
      if (size < CodecBuffers.PREFIX_BYTES) {
        throw invalid(what + ": compressed buffer " + i + " is " + size + " bytes, shorter than its 8-byte length "
            + "prefix");
      }
      long length = CodecBuffers.prefix(buffers.get(i), 0);
      long payload = size - CodecBuffers.PREFIX_BYTES;
      if (length == CodecBuffers.STORED) {
        lengths[i] = payload;
      } else if (length < 0) {
        throw invalid(what + ": compressed buffer " + i + " declares length " + length + " (only -1 or 0 and more "
            + "are lengths)");
      } else if (length > Integer.MAX_VALUE) {
        throw invalid(what + ": compressed buffer " + i + " declares " + length + " bytes, over the 2 GiB an Arrow "
            + "buffer of one batch may hold here");
      } else if (length > codec.maxDecompressedLength(payload)) {
        throw invalid(what + ": compressed buffer " + i + " declares " + length + " bytes from " + payload
            + " compressed bytes, more than the codec can make of them");
      } else if (length > 0 && payload == 0) {
        throw invalid(what + ": compressed buffer " + i + " declares " + length + " bytes and holds none");
      } else {
        lengths[i] = length;
      }
    }
    return lengths;
  }

  /** The batch's buffers decompressed into slices of {@code whole} from {@code at[0]} on; a new plain batch. */
  private static ArrowRecordBatch plain(ArrowRecordBatch batch, long[] lengths, ArrowBuf whole, long[] at,
      String what) {
    List<ArrowBuf> buffers = batch.getBuffers();
    boolean compressed = BatchCompressor.isCompressed(batch);
    BufferCodec codec = compressed ? codec(batch.getBodyCompression().getCodec(), what) : null;
    List<ArrowBuf> slices = new ArrayList<>(buffers.size());
    for (int i = 0; i < buffers.size(); i++) {
      ArrowBuf source = buffers.get(i);
      int length = Math.toIntExact(lengths[i]);
      long start = at[0];
      if (length > 0) {
        if (!compressed) {
          whole.setBytes(start, source, 0, length);
        } else if (CodecBuffers.prefix(source, 0) == CodecBuffers.STORED) {
          whole.setBytes(start, source, CodecBuffers.PREFIX_BYTES, length);
        } else {
          int payload = Math.toIntExact(source.readableBytes() - CodecBuffers.PREFIX_BYTES);
          ByteBuffer in = CodecBuffers.readable(source, CodecBuffers.PREFIX_BYTES, payload);
          ByteBuffer out = CodecBuffers.writable(whole, start, length);
          try {
            codec.decompress(in, 0, payload, out, 0, length);
          } catch (IllegalArgumentException e) {
            throw ThallusException.of(StatusCode.INVALID_ARGUMENT, what + ": compressed buffer " + i + ": "
                + e.getMessage(), e);
          }
          CodecBuffers.writeBack(out, whole, start, length);
        }
      }
      slices.add(whole.slice(start, length));
      at[0] = CodecBuffers.align(start + length);
    }
    // The new batch takes its own reference to each slice.
    return new ArrowRecordBatch(batch.getLength(), batch.getNodes(), slices,
        NoCompressionCodec.DEFAULT_BODY_COMPRESSION, batch.getVariadicBufferCounts(), true);
  }

  private static BufferCodec codec(byte arrowCodec, String what) {
    try {
      return BufferCodec.of(BatchCompression.ofArrowCodec(arrowCodec));
    } catch (IllegalArgumentException e) {
      throw invalid(what + " is compressed with codec " + arrowCodec + ", which Thallus does not know (LZ4_FRAME = 0, "
          + "ZSTD = 1)");
    }
  }

  private static ThallusException invalid(String message) {
    return ThallusException.of(StatusCode.INVALID_ARGUMENT, message);
  }
}
