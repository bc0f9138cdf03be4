package io.thallus.spi;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;

/**
 * Turns batches into layouts and back, the same way for every transport: the server side describes where each
 * buffer goes, the client side rebuilds Arrow batches on buffers it received, without copying.
 */
public final class BatchLayouts {
  /** Buffers start on this boundary inside a packed body, as Arrow IPC requires. */
  public static final int ALIGNMENT = 8;

  private BatchLayouts() {}

  /** A packed body: every buffer of every part, in order, each starting on an {@link #ALIGNMENT} boundary. */
  public record PackedBody(List<BatchPart> parts, List<ArrowBuf> buffers, List<Long> offsets, long length) {}

  /**
   * Lays out the contents' buffers one after the other (dictionaries first), padded to {@link #ALIGNMENT}.
   * Each descriptor's address is the buffer's offset in the body; its key is {@code key}.
   */
  public static PackedBody pack(BatchContents contents, int key) {
    List<BatchPart> parts = new ArrayList<>(contents.dictionaries().size() + 1);
    List<ArrowBuf> buffers = new ArrayList<>();
    List<Long> offsets = new ArrayList<>();
    long offset = 0;
    for (ArrowDictionaryBatch dictionary : contents.dictionaries()) {
      offset = packPart(dictionary.getDictionaryId(), dictionary.isDelta(), dictionary.getDictionary(), key, offset,
          parts, buffers, offsets);
    }
    offset = packPart(BatchPart.RECORDS, false, contents.records(), key, offset, parts, buffers, offsets);
    return new PackedBody(parts, buffers, offsets, offset);
  }

  private static long packPart(long dictionaryId, boolean delta, ArrowRecordBatch batch, int key, long start,
      List<BatchPart> parts, List<ArrowBuf> buffers, List<Long> offsets) {
    long offset = start;
    List<BufferDescriptor> descriptors = new ArrayList<>(batch.getBuffers().size());
    for (ArrowBuf buffer : batch.getBuffers()) {
      long length = buffer.readableBytes();
      descriptors.add(new BufferDescriptor(offset, length, key));
      buffers.add(buffer);
      offsets.add(offset);
      offset = align(offset + length);
    }
    parts.add(new BatchPart(dictionaryId, delta, batch.getLength(), batch.getNodes(), descriptors));
    return offset;
  }

  public static long align(long offset) {
    return (offset + ALIGNMENT - 1) & -ALIGNMENT;
  }

  /**
   * Rebuilds a batch from its header, taking each buffer from {@code bufferFor} (typically a slice of a received
   * body). The returned contents hold their own references; the caller keeps and releases its own.
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
        ArrowRecordBatch batch = new ArrowRecordBatch(Math.toIntExact(part.length()), part.nodes(), buffers);
        if (part.isDictionary()) {
          dictionaries.add(new ArrowDictionaryBatch(part.dictionaryId(), batch, part.delta()));
        } else if (records != null) {
          batch.close();
          throw new IllegalArgumentException("batch " + header.batchId() + " has two record parts");
        } else {
          records = batch;
        }
      }
      if (records == null) {
        throw new IllegalArgumentException("batch " + header.batchId() + " has no record part");
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

  /** An independent handle on the same buffers (each retained once more). */
  public static ArrowRecordBatch retainedCopy(ArrowRecordBatch batch) {
    return new ArrowRecordBatch(batch.getLength(), batch.getNodes(), batch.getBuffers());
  }
}
