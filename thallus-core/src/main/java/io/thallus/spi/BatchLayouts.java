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

  /** The bytes a packed body occupies under one key: {@code [start, end)}. */
  public record Span(int key, long start, long end) {
    public long length() {
      return end - start;
    }
  }

  /**
   * Where a batch packed into one region lies: its key and byte range, or null when it carries no bytes at all.
   * A batch whose buffers name more than one key is a protocol error.
   */
  public static Span span(BatchHeader header) {
    Integer key = null;
    long start = Long.MAX_VALUE;
    long end = 0;
    boolean anyBytes = false;
    for (BatchPart part : header.parts()) {
      for (BufferDescriptor d : part.buffers()) {
        if (key == null) {
          key = d.key();
        } else if (d.key() != key) {
          throw io.thallus.ThallusException.of(io.thallus.StatusCode.PROTOCOL_ERROR,
              "batch " + header.batchId() + " spans more than one key");
        }
        anyBytes |= d.length() > 0;
        start = Math.min(start, d.address());
        end = Math.max(end, d.address() + d.length());
      }
    }
    return anyBytes ? new Span(key, start, end) : null;
  }

  /** The packed parts moved to where the body was placed: each address plus {@code base}, under {@code key}. */
  public static List<BatchPart> relocate(List<BatchPart> parts, long base, int key) {
    List<BatchPart> moved = new ArrayList<>(parts.size());
    for (BatchPart part : parts) {
      List<BufferDescriptor> buffers = new ArrayList<>(part.buffers().size());
      for (BufferDescriptor d : part.buffers()) {
        buffers.add(new BufferDescriptor(base + d.address(), d.length(), key));
      }
      moved.add(new BatchPart(part.dictionaryId(), part.delta(), part.length(), part.nodes(), buffers));
    }
    return moved;
  }

  /** Bodies up to this size travel inside the BATCH frame: cheaper than moving them any other way. */
  public static final int INLINE_MAX = 32 * 1024;

  /**
   * A packed body copied into {@code inline}, the bytes a BATCH frame carries (padding zeroed); returns it. Take
   * the buffer from {@link ControlWriter#allocateInline} so it counts against the client's budget.
   */
  public static io.netty.buffer.ByteBuf copyInline(PackedBody body, io.netty.buffer.ByteBuf inline) {
    for (int i = 0; i < body.buffers().size(); i++) {
      ArrowBuf buffer = body.buffers().get(i);
      inline.writeZero((int) (body.offsets().get(i) - inline.writerIndex()));
      long length = buffer.readableBytes();
      if (length > 0) {
        inline.writeBytes(buffer.nioBuffer(0, Math.toIntExact(length)));
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
          throw io.thallus.ThallusException.of(io.thallus.StatusCode.PROTOCOL_ERROR, "batch " + header.batchId()
              + " has a buffer outside its body: offset " + buffer.address() + ", length " + buffer.length());
        }
        end = Math.max(end, bufferEnd);
      }
    }
    return align(end);
  }

  /** Rebuilds a batch whose packed body came inline, copying it into memory of {@code allocator}. */
  public static BatchContents fromInline(BatchHeader header, io.netty.buffer.ByteBuf inline,
      org.apache.arrow.memory.BufferAllocator allocator) {
    long bodyLength = bodyLength(header);
    if (inline.readableBytes() < bodyLength) {
      throw io.thallus.ThallusException.of(io.thallus.StatusCode.PROTOCOL_ERROR, "batch " + header.batchId()
          + " needs " + bodyLength + " inline bytes, the frame has " + inline.readableBytes());
    }
    int length = (int) bodyLength;
    try (ArrowBuf body = allocator.buffer(Math.max(length, 1))) {
      if (length > 0) {
        inline.getBytes(inline.readerIndex(), body.nioBuffer(0, length));
      }
      return assemble(header, d -> body.slice(d.address(), d.length()));
    }
  }

  /** An independent handle on the same buffers (each retained once more). */
  public static ArrowRecordBatch retainedCopy(ArrowRecordBatch batch) {
    return new ArrowRecordBatch(batch.getLength(), batch.getNodes(), batch.getBuffers());
  }
}
