package io.thallus.internal.transport.ipc;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.spi.BatchContents;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.ClientOffer;
import io.thallus.spi.ClientSession;
import io.thallus.spi.ControlWriter;
import io.thallus.spi.Deadline;
import io.thallus.spi.ServerSession;
import io.thallus.spi.ServerTransport;
import io.thallus.spi.Transport;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.ReadChannel;
import org.apache.arrow.vector.ipc.WriteChannel;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.ipc.message.ArrowMessage;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.ipc.message.MessageSerializer;

/**
 * The baseline: each batch is serialized to Arrow IPC messages (dictionaries, then the record batch) inside its
 * BATCH frame, and deserialized into fresh buffers on the client — what an RPC with serialization costs. It is
 * the yardstick the zero-copy transports are measured against, so it is kept honest: one copy into the frame on
 * the server, socket reads collected without copying, one copy out of the frame on the client.
 */
public final class IpcTransport implements Transport {
  public static final String NAME = "ipc";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public boolean confidentialUnderTls() {
    return true;
  }

  @Override
  public int preference() {
    return 0;
  }

  @Override
  public ServerTransport startServer(ServerTransport.Context context) {
    return new ServerTransport() {
      @Override
      public ServerSession accept(InetSocketAddress client, Map<String, String> offer) {
        return new Server();
      }

      @Override
      public void close() {}
    };
  }

  @Override
  public ClientOffer offer(ClientOffer.Context context) {
    return ClientOffer.of(Map.of(), welcome -> new Client(context.allocator()));
  }

  private static final class Server implements ServerSession {
    @Override
    public Map<String, String> welcomeParameters() {
      return Map.of();
    }

    @Override
    public void send(int streamId, long batchId, BatchContents contents, ControlWriter control, Deadline deadline) {
      // The frame counts against the client's budget until it is written: a client that reads nothing cannot
      // make the server queue frames without bound.
      ByteBuf frame = control.allocateInline((int) Math.min(Integer.MAX_VALUE - 8,
          contents.bufferBytes() + 1024L * (1 + contents.dictionaries().size())));
      try (contents) {
        WriteChannel out = new WriteChannel(new ByteBufWriter(frame));
        for (ArrowDictionaryBatch dictionary : contents.dictionaries()) {
          MessageSerializer.serialize(out, dictionary);
        }
        MessageSerializer.serialize(out, contents.records());
      } catch (IOException | RuntimeException e) {
        frame.release();
        throw ThallusException.of(StatusCode.INTERNAL, "cannot serialize batch " + batchId + ": " + e, e);
      }
      control.writeBatch(new BatchHeader(streamId, batchId, List.of()), frame, () -> {});
    }

    @Override
    public void close() {}
  }

  private static final class Client implements ClientSession {
    private final BufferAllocator allocator;

    Client(BufferAllocator allocator) {
      this.allocator = allocator;
    }

    @Override
    public void onBatch(BatchHeader header, ByteBuf inline, BatchSink sink) {
      List<ArrowDictionaryBatch> dictionaries = new ArrayList<>();
      ArrowRecordBatch records = null;
      try {
        ReadChannel in = new ReadChannel(new ByteBufReader(inline));
        while (inline.isReadable()) {
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
      } catch (IOException | RuntimeException e) {
        dictionaries.forEach(ArrowDictionaryBatch::close);
        if (records != null) {
          records.close();
        }
        sink.fail(e instanceof ThallusException t ? t : ThallusException.of(StatusCode.PROTOCOL_ERROR,
            "cannot read IPC batch " + header.batchId() + ": " + e, e));
        return;
      }
      sink.deliver(header, new BatchContents(dictionaries, records));
    }

    @Override
    public void close() {}
  }

  /** Arrow's IPC writer writing straight into a Netty buffer (direct to direct, no byte[] in between). */
  private static final class ByteBufWriter implements WritableByteChannel {
    private final ByteBuf target;

    ByteBufWriter(ByteBuf target) {
      this.target = target;
    }

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
  private static final class ByteBufReader implements ReadableByteChannel {
    private final ByteBuf source;

    ByteBufReader(ByteBuf source) {
      this.source = source;
    }

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
