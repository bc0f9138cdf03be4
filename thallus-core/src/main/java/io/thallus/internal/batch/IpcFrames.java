package io.thallus.internal.batch;

import io.netty.buffer.ByteBuf;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.spi.BatchContents;
import io.thallus.spi.BatchHeader;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.ReadChannel;
import org.apache.arrow.vector.ipc.WriteChannel;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.ipc.message.ArrowMessage;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.ipc.message.MessageSerializer;

/**
 * The ipc baseline's batches: Arrow IPC messages (dictionaries, then the record batch) inside the BATCH frame,
 * serialized on the server and deserialized into fresh buffers on the client — what an RPC with serialization costs.
 * Kept honest: one copy into the frame, socket reads collected without copying, one copy out of the frame.
 */
public final class IpcFrames {
  private IpcFrames() {}

  /** The frame bytes {@code contents} need at most: their buffers plus room for each message's metadata. */
  public static int frameBytes(BatchContents contents) {
    return (int) Math.min(Integer.MAX_VALUE - 8, contents.bufferBytes() + 1024L * (1 + contents.dictionaries().size()));
  }

  /** Serializes {@code contents} into {@code frame}. */
  public static void write(long batchId, BatchContents contents, ByteBuf frame) {
    try {
      WriteChannel out = new WriteChannel(new ByteBufWriter(frame));
      for (ArrowDictionaryBatch dictionary : contents.dictionaries()) {
        MessageSerializer.serialize(out, dictionary);
      }
      MessageSerializer.serialize(out, contents.records());
    } catch (IOException | RuntimeException e) {
      throw ThallusException.of(StatusCode.INTERNAL, "cannot serialize batch " + batchId + ": " + e, e);
    }
  }

  /** Deserializes a frame's messages into buffers of {@code allocator}. */
  public static BatchContents read(BatchHeader header, ByteBuf frame, BufferAllocator allocator) {
    List<ArrowDictionaryBatch> dictionaries = new ArrayList<>();
    ArrowRecordBatch records = null;
    try {
      ReadChannel in = new ReadChannel(new ByteBufReader(frame));
      while (frame.isReadable()) {
        ArrowMessage message = MessageSerializer.deserializeMessageBatch(in, allocator);
        if (message instanceof ArrowDictionaryBatch dictionary) {
          dictionaries.add(dictionary);
        } else if (message instanceof ArrowRecordBatch batch && records == null) {
          records = batch;
        } else {
          if (message instanceof ArrowRecordBatch extra) {
            extra.close();
          }
          throw ThallusException.of(StatusCode.PROTOCOL_ERROR,
              "batch " + header.batchId() + " holds an unexpected IPC message");
        }
      }
      if (records == null) {
        throw ThallusException.of(StatusCode.PROTOCOL_ERROR, "batch " + header.batchId() + " holds no records");
      }
      return new BatchContents(dictionaries, records);
    } catch (IOException | RuntimeException e) {
      dictionaries.forEach(ArrowDictionaryBatch::close);
      if (records != null) {
        records.close();
      }
      if (e instanceof UnsupportedOperationException) {
        // Arrow's IPC reader reads into ByteBuffer views of its memory, which the JVM grants only when opened.
        throw ThallusException.of(StatusCode.FAILED_PRECONDITION, "the ipc transport needs this JVM started with "
            + "--add-opens=java.base/java.nio=ALL-UNNAMED (Arrow's IPC reader); the other transports do not", e);
      }
      throw e instanceof ThallusException t ? t : ThallusException.of(StatusCode.PROTOCOL_ERROR,
          "cannot read IPC batch " + header.batchId() + ": " + e, e);
    }
  }

  /** Arrow's IPC writer writing straight into a Netty buffer (direct to direct, no byte[] in between). */
  private record ByteBufWriter(ByteBuf target) implements WritableByteChannel {
    @Override
    public int write(ByteBuffer source) {
      int length = source.remaining();
      target.writeBytes(source);
      return length;
    }

    @Override
    public boolean isOpen() {
      return true;
    }

    @Override
    public void close() {}
  }

  /** Arrow's IPC reader reading straight out of a (possibly composite) Netty buffer. */
  private record ByteBufReader(ByteBuf source) implements ReadableByteChannel {
    @Override
    public int read(ByteBuffer target) {
      if (!source.isReadable()) {
        return -1;
      }
      int length = Math.min(target.remaining(), source.readableBytes());
      int limit = target.limit();
      target.limit(target.position() + length);
      source.readBytes(target);
      target.limit(limit);
      return length;
    }

    @Override
    public boolean isOpen() {
      return true;
    }

    @Override
    public void close() {}
  }
}
