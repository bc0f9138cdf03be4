package io.thallus.internal.batch;

import io.netty.buffer.ByteBuf;
import io.thallus.BatchCompression;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.spi.BatchContents;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.BatchPart;
import io.thallus.spi.BufferDescriptor;
import io.thallus.spi.PackedBody;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.compression.NoCompressionCodec;
import org.apache.arrow.vector.ipc.message.ArrowBodyCompression;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;

/**
 * Turns batches into packed bodies and back, the same way for every transport: the server packs each batch once,
 * the client rebuilds Arrow batches on the bytes it received, without copying.
 */
public final class BatchLayouts {
  /** Bodies up to this size travel inside the BATCH frame, whatever the transport: cheaper than any other way. */
  public static final int INLINE_MAX = 32 * 1024;

  private BatchLayouts() {}

  /** Lays out the contents' buffers one after the other (dictionaries first), each on an aligned offset. */
  public static PackedBody pack(BatchContents contents) {
    List<BatchPart> parts = new ArrayList<>(contents.dictionaries().size() + 1);
    List<ArrowBuf> buffers = new ArrayList<>();
    List<Long> offsets = new ArrayList<>();
    long offset = 0;
    for (ArrowDictionaryBatch dictionary : contents.dictionaries()) {
      offset = packPart(dictionary.getDictionaryId(), dictionary.isDelta(), dictionary.getDictionary(), offset,
          parts, buffers, offsets);
    }
    offset = packPart(BatchPart.RECORDS, false, contents.records(), offset, parts, buffers, offsets);
    return new PackedBody(parts, buffers, offsets.stream().mapToLong(Long::longValue).toArray(), offset);
  }

  private static long packPart(long dictionaryId, boolean delta, ArrowRecordBatch batch, long start,
      List<BatchPart> parts, List<ArrowBuf> buffers, List<Long> offsets) {
    long offset = start;
    List<BufferDescriptor> descriptors = new ArrayList<>(batch.getBuffers().size());
    for (ArrowBuf buffer : batch.getBuffers()) {
      long length = buffer.readableBytes();
      descriptors.add(new BufferDescriptor(offset, length, 0));
      buffers.add(buffer);
      offsets.add(offset);
      offset = PackedBody.align(offset + length);
    }
    parts.add(new BatchPart(dictionaryId, delta, batch.getLength(), batch.getNodes(), descriptors,
        batch.getVariadicBufferCounts(), compressionOf(batch)));
    return offset;
  }

  /** How {@code batch}'s body is compressed; a codec Thallus does not know cannot be sent. */
  private static BatchCompression compressionOf(ArrowRecordBatch batch) {
    ArrowBodyCompression body = batch.getBodyCompression();
    if (body == null || body.getCodec() == NoCompressionCodec.COMPRESSION_TYPE) {
      return BatchCompression.NONE;
    }
    try {
      return BatchCompression.ofArrowCodec(body.getCodec());
    } catch (IllegalArgumentException e) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "a batch compressed with Arrow codec " + body.getCodec()
          + " cannot be sent: " + e.getMessage());
    }
  }

  /** Arrow's description of a part's body: compressed buffer by buffer with its codec, or not at all. */
  private static ArrowBodyCompression bodyCompression(BatchPart part) {
    return part.isCompressed()
        ? new ArrowBodyCompression(part.compression().arrowCodec(), CodecBuffers.BUFFER_METHOD)
        : NoCompressionCodec.DEFAULT_BODY_COMPRESSION;
  }

  /**
   * Rebuilds a batch from its header, taking each buffer from {@code bufferFor} (typically a slice of a received
   * body). The returned contents hold their own references; the caller keeps and releases its own. A compressed part
   * comes back compressed: the receiver decompresses it ({@link BatchDecompressor}) before checking it.
   */
  public static BatchContents assemble(BatchHeader header, Function<BufferDescriptor, ArrowBuf> bufferFor) {
    List<ArrowDictionaryBatch> dictionaries = new ArrayList<>();
    ArrowRecordBatch records = null;
    try {
      for (BatchPart part : header.parts()) {
        List<ArrowBuf> buffers = new ArrayList<>(part.buffers().size());
        for (BufferDescriptor descriptor : part.buffers()) {
          buffers.add(bufferFor.apply(descriptor));
        }
        // Arrow's loader takes a view column's data buffers by these counts; without them it cannot load one.
        ArrowRecordBatch batch = new ArrowRecordBatch(Math.toIntExact(part.length()), part.nodes(), buffers,
            bodyCompression(part), part.variadicBufferCounts(), true);
        if (part.isDictionary()) {
          dictionaries.add(new ArrowDictionaryBatch(part.dictionaryId(), batch, part.delta()));
        } else if (records != null) {
          batch.close();
          throw ThallusException.of(StatusCode.PROTOCOL_ERROR, "batch " + header.batchId() + " has two record parts");
        } else {
          records = batch;
        }
      }
      if (records == null) {
        throw ThallusException.of(StatusCode.PROTOCOL_ERROR, "batch " + header.batchId() + " has no record part");
      }
      return new BatchContents(dictionaries, records);
    } catch (RuntimeException e) {
      dictionaries.forEach(ArrowDictionaryBatch::close);
      if (records != null) {
        records.close();
      }
      throw e;
    }
  }

  /** A packed body copied into {@code inline}, the bytes a BATCH frame carries (padding zeroed); returns it. */
  public static ByteBuf copyInline(PackedBody body, ByteBuf inline) {
    for (int i = 0; i < body.buffers().size(); i++) {
      ArrowBuf buffer = body.buffers().get(i);
      inline.writeZero((int) (body.offset(i) - inline.writerIndex()));
      long length = buffer.readableBytes();
      if (length > 0) {
        ArrowViews.append(buffer, 0, Math.toIntExact(length), inline);
      }
    }
    inline.writeZero((int) (body.length() - inline.writerIndex()));
    return inline;
  }

  /** Where a packed body ends: the end of its last buffer, aligned. Checks every descriptor on the way. */
  public static long bodyLength(BatchHeader header) {
    long end = 0;
    for (BatchPart part : header.parts()) {
      for (BufferDescriptor buffer : part.buffers()) {
        long bufferEnd = buffer.address() + buffer.length();
        if (buffer.address() < 0 || bufferEnd < buffer.address()) {
          throw ThallusException.of(StatusCode.PROTOCOL_ERROR, "batch " + header.batchId()
              + " has a buffer outside its body: offset " + buffer.address() + ", length " + buffer.length());
        }
        end = Math.max(end, bufferEnd);
      }
    }
    return PackedBody.align(end);
  }

  /** Rebuilds a batch whose packed body came inline, copying it into memory of {@code allocator}. */
  public static BatchContents fromInline(BatchHeader header, ByteBuf inline, BufferAllocator allocator) {
    long bodyLength = bodyLength(header);
    if (inline.readableBytes() < bodyLength) {
      throw ThallusException.of(StatusCode.PROTOCOL_ERROR, "batch " + header.batchId()
          + " needs " + bodyLength + " inline bytes, the frame has " + inline.readableBytes());
    }
    int length = (int) bodyLength;
    try (ArrowBuf body = allocator.buffer(Math.max(length, 1))) {
      if (length > 0) {
        ArrowViews.copy(inline, inline.readerIndex(), body, 0, length);
      }
      return assemble(header, d -> body.slice(d.address(), d.length()));
    }
  }
}
