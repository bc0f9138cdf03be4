package io.thallus.internal.protocol;

import static io.thallus.internal.protocol.WireReader.readCount;
import static io.thallus.internal.protocol.WireReader.readInt;
import static io.thallus.internal.protocol.WireReader.readLong;
import static io.thallus.internal.protocol.WireReader.readU16;
import static io.thallus.internal.protocol.WireReader.readU8;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.CorruptedFrameException;
import io.thallus.BatchCompression;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.BatchPart;
import io.thallus.spi.BufferDescriptor;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;

/**
 * A BATCH's header, both ways: the batch's parts, each with its Arrow field nodes and the descriptors of its
 * buffers where the transport placed them (the layout is in {@link MessageCodec}'s table). The inline bytes that
 * follow the header are the caller's: they are neither read nor written here.
 */
final class BatchHeaderCodec {
  /** Bytes of one field node: length i64, nullCount i64. */
  private static final int NODE_BYTES = 16;
  /** Bytes of one buffer descriptor: address i64, length i64, key i32. */
  private static final int BUFFER_BYTES = 20;
  /** Part flag: a delta dictionary batch. */
  private static final int DELTA = 1;
  /** Part flag: the part's variadic buffer counts (its view columns' data buffers) follow its buffers. */
  private static final int VARIADIC = 2;
  /**
   * Part flag: the part's buffers are compressed (Arrow's body compression); a codec byte (Arrow's number: 0
   * LZ4_FRAME, 1 ZSTD) follows the flags.
   */
  private static final int COMPRESSED = 4;
  /** Bytes of one variadic buffer count: i64. */
  private static final int COUNT_BYTES = 8;

  private BatchHeaderCodec() {}

  static BatchHeader read(ByteBuf in) {
    int streamId = readInt(in);
    long batchId = readLong(in);
    int partCount = readU16(in);
    List<BatchPart> parts = new ArrayList<>(Math.min(partCount, in.readableBytes()));
    for (int p = 0; p < partCount; p++) {
      long dictionaryId = readLong(in);
      int flags = readU8(in);
      if ((flags & ~(DELTA | VARIADIC | COMPRESSED)) != 0) {
        throw new CorruptedFrameException("batch part flags " + flags + " set bits this version does not know");
      }
      boolean delta = (flags & DELTA) != 0;
      BatchCompression compression = BatchCompression.NONE;
      if ((flags & COMPRESSED) != 0) {
        byte codec = (byte) readU8(in);
        if (codec == BatchCompression.NONE.arrowCodec()) {
          throw new CorruptedFrameException("batch part flagged compressed names no codec");
        }
        try {
          compression = BatchCompression.ofArrowCodec(codec);
        } catch (IllegalArgumentException unknown) {
          throw new CorruptedFrameException("batch part compressed with codec " + codec + ", which this version does "
              + "not know (LZ4_FRAME = 0, ZSTD = 1)");
        }
      }
      long length = readLong(in);
      if (length < 0 || length > Integer.MAX_VALUE) {
        throw new CorruptedFrameException("batch part length " + length + " is out of range");
      }
      int nodeCount = readCount(in, NODE_BYTES);
      List<ArrowFieldNode> nodes = new ArrayList<>(nodeCount);
      for (int i = 0; i < nodeCount; i++) {
        long nodeLength = in.readLong();
        long nullCount = in.readLong();
        if (nodeLength < 0 || nullCount < 0 || nullCount > nodeLength || nodeLength > Integer.MAX_VALUE) {
          throw new CorruptedFrameException("field node (" + nodeLength + ", " + nullCount + ") is out of range");
        }
        nodes.add(new ArrowFieldNode(nodeLength, nullCount));
      }
      int bufferCount = readCount(in, BUFFER_BYTES);
      List<BufferDescriptor> buffers = new ArrayList<>(bufferCount);
      for (int i = 0; i < bufferCount; i++) {
        long address = in.readLong();
        long bufferLength = in.readLong();
        int key = in.readInt();
        if (bufferLength < 0) {
          throw new CorruptedFrameException("negative buffer length " + bufferLength);
        }
        buffers.add(new BufferDescriptor(address, bufferLength, key));
      }
      List<Long> variadicCounts = List.of();
      if ((flags & VARIADIC) != 0) {
        int countCount = readCount(in, COUNT_BYTES);
        Long[] counts = new Long[countCount];
        for (int i = 0; i < countCount; i++) {
          long count = in.readLong();
          if (count < 0 || count > bufferCount) {
            throw new CorruptedFrameException("variadic buffer count " + count + " is outside the part's "
                + bufferCount + " buffers");
          }
          counts[i] = count;
        }
        variadicCounts = List.of(counts);
      }
      parts.add(new BatchPart(dictionaryId, delta, length, nodes, buffers, variadicCounts, compression));
    }
    return new BatchHeader(streamId, batchId, parts);
  }

  static void write(ByteBuf out, BatchHeader header) {
    out.writeInt(header.streamId());
    out.writeLong(header.batchId());
    out.writeShort(header.parts().size());
    for (BatchPart part : header.parts()) {
      out.writeLong(part.dictionaryId());
      boolean variadic = !part.variadicBufferCounts().isEmpty();
      out.writeByte((part.delta() ? DELTA : 0) | (variadic ? VARIADIC : 0) | (part.isCompressed() ? COMPRESSED : 0));
      if (part.isCompressed()) {
        out.writeByte(part.compression().arrowCodec());
      }
      out.writeLong(part.length());
      out.writeInt(part.nodes().size());
      for (ArrowFieldNode node : part.nodes()) {
        out.writeLong(node.getLength());
        out.writeLong(node.getNullCount());
      }
      out.writeInt(part.buffers().size());
      for (BufferDescriptor buffer : part.buffers()) {
        out.writeLong(buffer.address());
        out.writeLong(buffer.length());
        out.writeInt(buffer.key());
      }
      if (variadic) {
        out.writeInt(part.variadicBufferCounts().size());
        for (long count : part.variadicBufferCounts()) {
          out.writeLong(count);
        }
      }
    }
  }

  /** The bytes the header will take, with room to spare: the encoder's first buffer then needs no growing. */
  static int estimate(BatchHeader header) {
    int size = 32;
    for (BatchPart part : header.parts()) {
      size += 32 + part.nodes().size() * NODE_BYTES + part.buffers().size() * BUFFER_BYTES
          + part.variadicBufferCounts().size() * COUNT_BYTES;
    }
    return size;
  }
}
