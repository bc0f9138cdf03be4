package io.thallus.internal.protocol;

import static io.thallus.internal.protocol.WireReader.readBytes;
import static io.thallus.internal.protocol.WireReader.readCount;
import static io.thallus.internal.protocol.WireReader.readInt;
import static io.thallus.internal.protocol.WireReader.readList;
import static io.thallus.internal.protocol.WireReader.readLong;
import static io.thallus.internal.protocol.WireReader.readMap;
import static io.thallus.internal.protocol.WireReader.readString;
import static io.thallus.internal.protocol.WireReader.readU16;
import static io.thallus.internal.protocol.WireReader.readU8;
import static io.thallus.internal.protocol.WireWriter.writeList;
import static io.thallus.internal.protocol.WireWriter.writeMap;
import static io.thallus.internal.protocol.WireWriter.writeString;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.MessageToMessageDecoder;
import io.netty.handler.codec.MessageToMessageEncoder;
import io.thallus.StatusCode;
import java.util.List;
import java.util.Map;

/**
 * The bodies of the control protocol's messages. Every integer is big-endian. A {@code string} is a u32 byte
 * count and UTF-8; a {@code map} is a u16 count of string pairs; a {@code list} a u16 count of strings.
 *
 * <pre>
 * HELLO    magic u32 "THAL", version u16, clientName string, transports list, parameters map, credentials map
 * WELCOME  version u16, transport string, parameters map, serverName string
 * OPEN     streamId i32, sql string, dataset string, batchRows i32, credits i32, timeoutMillis i64, flags u8
 *            (1: schema only, 2: parameter rows follow, 4: in the session's transaction, 8: describe the statement
 *            instead of running it), parameterCount u16, parameter * parameterCount,
 *            options map, then with flag 2: parameterRows u32 count + bytes (an Arrow IPC stream: one column per ?)
 *            parameter = tag u8, then by tag: 0 null; 1 boolean u8; 2 int8; 3 int16; 4 int32; 5 int64; 6 float32;
 *                        7 float64; 8 decimal string; 9 string; 10 bytes (u32 count + bytes); 11 date (epoch
 *                        day i64); 12 time (nano of day i64); 13 timestamp (epoch second i64, nano i32);
 *                        14 timestamp with time zone (epoch second i64, nano i32, offset seconds i32);
 *                        15 uuid (most i64, least i64); 16 big integer string;
 *                        17 list (element type string, u32 count, parameter * count; at most 16 deep)
 * OPENED   streamId i32, schema: u32 count + bytes (an Arrow IPC Schema message)
 * NEXT     streamId i32, credits i32, releaseCount u32, releases i64 * releaseCount
 * BATCH    streamId i32, batchId i64, partCount u16, part * partCount, inline bytes: the rest of the frame
 *            part = dictionaryId i64 (-1: the records), flags u8 (1: delta, 2: variadic counts follow,
 *                   4: compressed), with flag 4: codec u8 (Arrow's: 0 LZ4_FRAME, 1 ZSTD), length i64,
 *                   nodeCount u32, (length i64, nullCount i64) * nodeCount,
 *                   bufferCount u32, (address i64, length i64, key i32) * bufferCount,
 *                   then with flag 2: countCount u32, i64 * countCount (each view column's data buffers);
 *                   with flag 4 each buffer's bytes are Arrow's compressed buffer (uncompressed length i64
 *                   little-endian, -1: stored as is; then the codec's frame), decompressed by the receiver
 * END      streamId i32, rows i64, batches i64, bytes i64, serverNanos i64, serverCpuNanos i64
 * ERROR    streamId i32 (0: the connection), code u8, message string
 * CANCEL   streamId i32
 * CLOSE    streamId i32
 * INGEST   streamId i32, table string, mode u8 (0 create, 1 append, 2 replace), credits i32, timeoutMillis i64,
 *            schema: u32 count + bytes (an Arrow IPC Schema message), flags u8 (1: in the session's transaction),
 *            insertStatement string (empty: none), options map
 * DESCRIBE, DESCRIBED, LIST_SHARDS, SHARDS: see {@link DescriptionCodec}
 * </pre>
 *
 * On an ingest stream the roles of BATCH, NEXT and END turn around: the client sends BATCH and, after its last batch,
 * END; the server grants credits and reports the batches it released with NEXT, and answers END or ERROR.
 *
 * Anything that does not parse exactly (unknown type, a count larger than the bytes left, bytes left over) is a
 * {@link CorruptedFrameException}.
 *
 * <p>This class chooses each message's fields by its type; the field types are read by {@link WireReader} and written
 * by {@link WireWriter}, an OPEN's parameters by {@link ParameterCodec} and a BATCH's header by
 * {@link BatchHeaderCodec}.
 */
public final class MessageCodec {
  private MessageCodec() {}

  /** Frames (as cut by {@link FrameDecoder}: type byte + body) to {@link Message}s. */
  public static final class Decoder extends MessageToMessageDecoder<ByteBuf> {
    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf frame, List<Object> out) {
      out.add(decode(frame));
    }

    /** Decodes one frame; the returned BATCH (if any) holds its own reference to its inline bytes. */
    public static Message decode(ByteBuf frame) {
      if (!frame.isReadable()) {
        throw new CorruptedFrameException("empty frame: no message type");
      }
      int typeByte = frame.readUnsignedByte();
      MessageType type = MessageType.fromWireValue(typeByte);
      if (type == null) {
        throw new CorruptedFrameException("unknown message type " + typeByte);
      }
      Message message = switch (type) {
        case HELLO -> readHello(frame);
        case WELCOME -> new Message.Welcome(readU16(frame), readString(frame), readMap(frame), readString(frame));
        case OPEN -> readOpen(frame);
        case OPENED -> new Message.Opened(readInt(frame), readBytes(frame));
        case NEXT -> readNext(frame);
        case BATCH -> readBatch(frame);
        case END -> new Message.End(readInt(frame), readLong(frame), readLong(frame), readLong(frame),
            readLong(frame), readLong(frame));
        case ERROR -> new Message.Error(readInt(frame), StatusCode.fromWireValue(readU8(frame)), readString(frame));
        case CANCEL -> new Message.Cancel(readInt(frame));
        case CLOSE -> new Message.Close(readInt(frame));
        case INGEST -> readIngest(frame);
        case DESCRIBE -> DescriptionCodec.readDescribe(frame);
        case DESCRIBED -> DescriptionCodec.readDescribed(frame);
        case LIST_SHARDS -> new Message.ListShards(readInt(frame));
        case SHARDS -> DescriptionCodec.readShards(frame);
      };
      if (frame.isReadable()) {
        if (message instanceof Message.Batch batch) {
          batch.inline().release();
        }
        throw new CorruptedFrameException(
            frame.readableBytes() + " bytes left over after a " + type + " message");
      }
      return message;
    }

    private static Message readHello(ByteBuf in) {
      int magic = readInt(in);
      if (magic != Protocol.MAGIC) {
        throw new CorruptedFrameException(
            "not a Thallus client: HELLO starts with 0x" + Integer.toHexString(magic) + ", not \"THAL\"");
      }
      return new Message.Hello(readU16(in), readString(in), readList(in), readMap(in), readMap(in));
    }

    private static Message readNext(ByteBuf in) {
      int streamId = readInt(in);
      int credits = readInt(in);
      int count = readCount(in, Long.BYTES);
      long[] releases = new long[count];
      for (int i = 0; i < count; i++) {
        releases[i] = in.readLong();
      }
      return new Message.Next(streamId, credits, releases);
    }

    /** The header, then the rest of the frame as the inline bytes, retained (not copied) for the message. */
    private static Message readBatch(ByteBuf in) {
      return new Message.Batch(BatchHeaderCodec.read(in), in.readRetainedSlice(in.readableBytes()));
    }

    private static Message.Ingest readIngest(ByteBuf in) {
      int streamId = readInt(in);
      String table = readString(in);
      int mode = readU8(in);
      int credits = readInt(in);
      long timeoutMillis = readLong(in);
      byte[] schema = readBytes(in);
      int flags = readU8(in);
      if ((flags & ~Message.Ingest.IN_TRANSACTION) != 0) {
        throw new CorruptedFrameException("INGEST flags " + flags + " set bits this version does not know");
      }
      return new Message.Ingest(streamId, table, mode, credits, timeoutMillis, schema, flags, readString(in),
          readMap(in));
    }

    private static Message.Open readOpen(ByteBuf in) {
      int streamId = readInt(in);
      String sql = readString(in);
      String dataset = readString(in);
      int batchRows = readInt(in);
      int credits = readInt(in);
      long timeoutMillis = readLong(in);
      int flags = readU8(in);
      if ((flags & ~Message.Open.KNOWN_FLAGS) != 0) {
        throw new CorruptedFrameException("OPEN flags " + flags + " set bits this version does not know");
      }
      List<Object> parameters = ParameterCodec.readParameters(in);
      Map<String, String> options = readMap(in);
      byte[] rows = new byte[0];
      if ((flags & Message.Open.PARAMETER_ROWS) != 0) {
        rows = readBytes(in);
        if (rows.length == 0) {
          throw new CorruptedFrameException("OPEN announces parameter rows and carries none");
        }
      }
      int parts = 1;
      if ((flags & Message.Open.SPLIT) != 0) {
        parts = readU16(in);
        if (parts < 2 || parts > Message.Open.MAX_PARTS || streamId > Integer.MAX_VALUE - parts + 1) {
          throw new CorruptedFrameException("OPEN asks for " + parts + " streams from id " + streamId + "; a split "
              + "has 2 to " + Message.Open.MAX_PARTS + " streams within the id range");
        }
      }
      return new Message.Open(streamId, sql, dataset, batchRows, credits, timeoutMillis, flags, parameters, options,
          rows, parts);
    }
  }

  /** {@link Message}s to frames; a BATCH's inline bytes are written after its header without being copied. */
  @ChannelHandler.Sharable
  public static final class Encoder extends MessageToMessageEncoder<Message> {
    public static final Encoder INSTANCE = new Encoder();

    @Override
    protected void encode(ChannelHandlerContext ctx, Message message, List<Object> out) {
      ByteBuf header = ctx.alloc().ioBuffer(estimate(message));
      ByteBuf inline = message instanceof Message.Batch batch ? batch.inline() : null;
      try {
        encode(message, header);
      } catch (RuntimeException e) {
        header.release();
        throw e;
      }
      int frameLength = header.readableBytes() - FrameDecoder.HEADER_BYTES
          + (inline == null ? 0 : inline.readableBytes());
      header.setInt(0, frameLength);
      out.add(header);
      if (inline != null && inline.isReadable()) {
        // The encoder releases the message after this call; the inline bytes travel on with a reference of their own.
        out.add(inline.retain());
      }
    }

    /** Writes the length placeholder, type and body (without BATCH inline bytes) into {@code out}. */
    public static void encode(Message message, ByteBuf out) {
      out.writeInt(0);
      out.writeByte(message.type().wireValue());
      switch (message) {
        case Message.Hello m -> {
          out.writeInt(Protocol.MAGIC);
          out.writeShort(m.version());
          writeString(out, m.clientName());
          writeList(out, m.transports());
          writeMap(out, m.parameters());
          writeMap(out, m.credentials());
        }
        case Message.Welcome m -> {
          out.writeShort(m.version());
          writeString(out, m.transport());
          writeMap(out, m.parameters());
          writeString(out, m.serverName());
        }
        case Message.Open m -> {
          out.writeInt(m.streamId());
          writeString(out, m.sql());
          writeString(out, m.dataset());
          out.writeInt(m.batchRows());
          out.writeInt(m.credits());
          out.writeLong(m.timeoutMillis());
          out.writeByte(m.flags());
          ParameterCodec.writeParameters(out, m.parameters());
          writeMap(out, m.options());
          if (m.parameterRows().length > 0) {
            out.writeInt(m.parameterRows().length);
            out.writeBytes(m.parameterRows());
          }
          if (m.parts() > 1) {
            out.writeShort(m.parts());
          }
        }
        case Message.Opened m -> {
          out.writeInt(m.streamId());
          out.writeInt(m.schema().length);
          out.writeBytes(m.schema());
        }
        case Message.Next m -> {
          out.writeInt(m.streamId());
          out.writeInt(m.credits());
          out.writeInt(m.releases().length);
          for (long id : m.releases()) {
            out.writeLong(id);
          }
        }
        case Message.Batch m -> BatchHeaderCodec.write(out, m.header());
        case Message.End m -> {
          out.writeInt(m.streamId());
          out.writeLong(m.rows());
          out.writeLong(m.batches());
          out.writeLong(m.bytes());
          out.writeLong(m.serverNanos());
          out.writeLong(m.serverCpuNanos());
        }
        case Message.Error m -> {
          out.writeInt(m.streamId());
          out.writeByte(m.code().wireValue());
          writeString(out, m.message());
        }
        case Message.Cancel m -> out.writeInt(m.streamId());
        case Message.Close m -> out.writeInt(m.streamId());
        case Message.Ingest m -> {
          out.writeInt(m.streamId());
          writeString(out, m.table());
          out.writeByte(m.mode());
          out.writeInt(m.credits());
          out.writeLong(m.timeoutMillis());
          out.writeInt(m.schema().length);
          out.writeBytes(m.schema());
          out.writeByte(m.flags());
          writeString(out, m.insertStatement());
          writeMap(out, m.options());
        }
        case Message.Describe m -> DescriptionCodec.writeDescribe(out, m);
        case Message.Described m -> DescriptionCodec.writeDescribed(out, m);
        case Message.ListShards m -> out.writeInt(m.streamId());
        case Message.Shards m -> DescriptionCodec.writeShards(out, m);
      }
    }

    private static int estimate(Message message) {
      if (message instanceof Message.Batch batch) {
        return BatchHeaderCodec.estimate(batch.header());
      }
      if (message instanceof Message.Open open) {
        return 64 + open.sql().length() * 3 + open.dataset().length() * 3;
      }
      if (message instanceof Message.Opened opened) {
        return 16 + opened.schema().length;
      }
      if (message instanceof Message.Ingest ingest) {
        return 64 + ingest.table().length() * 3 + ingest.schema().length + ingest.insertStatement().length() * 3;
      }
      return 256;
    }
  }
}
