package io.thallus.internal.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.MessageToMessageDecoder;
import io.netty.handler.codec.MessageToMessageEncoder;
import io.thallus.StatusCode;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.BatchPart;
import io.thallus.spi.BufferDescriptor;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;

/**
 * The bodies of the control protocol's messages. Every integer is big-endian. A {@code string} is a u32 byte
 * count and UTF-8; a {@code map} is a u16 count of string pairs; a {@code list} a u16 count of strings.
 *
 * <pre>
 * HELLO    magic u32 "THAL", version u16, clientName string, transports list, parameters map, credentials map
 * WELCOME  version u16, transport string, parameters map, serverName string
 * OPEN     streamId i32, sql string, dataset string, batchRows i32, credits i32, timeoutMillis i64, flags u8
 *            (1: schema only, 2: parameter rows follow), parameterCount u16, parameter * parameterCount,
 *            options map, then with flag 2: parameterRows u32 count + bytes (an Arrow IPC stream: one column per ?)
 *            parameter = tag u8, then by tag: 0 null; 1 boolean u8; 2 int8; 3 int16; 4 int32; 5 int64; 6 float32;
 *                        7 float64; 8 decimal string; 9 string; 10 bytes (u32 count + bytes); 11 date (epoch
 *                        day i64); 12 time (nano of day i64); 13 timestamp (epoch second i64, nano i32);
 *                        14 timestamp with time zone (epoch second i64, nano i32, offset seconds i32);
 *                        15 uuid (most i64, least i64); 16 big integer string
 * OPENED   streamId i32, schema: u32 count + bytes (an Arrow IPC Schema message)
 * NEXT     streamId i32, credits i32, releaseCount u32, releases i64 * releaseCount
 * BATCH    streamId i32, batchId i64, partCount u16, part * partCount, inline bytes: the rest of the frame
 *            part = dictionaryId i64 (-1: the records), flags u8 (1: delta), length i64,
 *                   nodeCount u32, (length i64, nullCount i64) * nodeCount,
 *                   bufferCount u32, (address i64, length i64, key i32) * bufferCount
 * END      streamId i32, rows i64, batches i64, bytes i64, serverNanos i64, serverCpuNanos i64
 * ERROR    streamId i32 (0: the connection), code u8, message string
 * CANCEL   streamId i32
 * CLOSE    streamId i32
 * INGEST   streamId i32, table string, mode u8 (0 create, 1 append, 2 replace), credits i32, timeoutMillis i64,
 *            schema: u32 count + bytes (an Arrow IPC Schema message), options map
 * DESCRIBE, DESCRIBED: see {@link DescriptionCodec}
 * </pre>
 *
 * On an ingest stream the roles of BATCH, NEXT and END turn around: the client sends BATCH and, after its last batch,
 * END; the server grants credits and reports the batches it released with NEXT, and answers END or ERROR.
 *
 * Anything that does not parse exactly (unknown type, a count larger than the bytes left, bytes left over) is a
 * {@link CorruptedFrameException}.
 */
public final class MessageCodec {
  /** Longest string a peer may send (SQL text included); the frame limit usually bites first. */
  static final int MAX_STRING_BYTES = 64 << 20;

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
        case INGEST -> new Message.Ingest(readInt(frame), readString(frame), readU8(frame), readInt(frame),
            readLong(frame), readBytes(frame), readMap(frame));
        case DESCRIBE -> DescriptionCodec.readDescribe(frame);
        case DESCRIBED -> DescriptionCodec.readDescribed(frame);
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

    private static Message readBatch(ByteBuf in) {
      int streamId = readInt(in);
      long batchId = readLong(in);
      int partCount = readU16(in);
      List<BatchPart> parts = new ArrayList<>(Math.min(partCount, in.readableBytes()));
      for (int p = 0; p < partCount; p++) {
        long dictionaryId = readLong(in);
        int flags = readU8(in);
        if ((flags & ~1) != 0) {
          throw new CorruptedFrameException("batch part flags " + flags + " set bits this version does not know");
        }
        boolean delta = flags == 1;
        long length = readLong(in);
        if (length < 0 || length > Integer.MAX_VALUE) {
          throw new CorruptedFrameException("batch part length " + length + " is out of range");
        }
        int nodeCount = readCount(in, 16);
        List<ArrowFieldNode> nodes = new ArrayList<>(nodeCount);
        for (int i = 0; i < nodeCount; i++) {
          long nodeLength = in.readLong();
          long nullCount = in.readLong();
          if (nodeLength < 0 || nullCount < 0 || nullCount > nodeLength || nodeLength > Integer.MAX_VALUE) {
            throw new CorruptedFrameException("field node (" + nodeLength + ", " + nullCount + ") is out of range");
          }
          nodes.add(new ArrowFieldNode(nodeLength, nullCount));
        }
        int bufferCount = readCount(in, 20);
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
        parts.add(new BatchPart(dictionaryId, delta, length, nodes, buffers));
      }
      ByteBuf inline = in.readRetainedSlice(in.readableBytes());
      return new Message.Batch(new BatchHeader(streamId, batchId, parts), inline);
    }

    private static int readU8(ByteBuf in) {
      need(in, 1);
      return in.readUnsignedByte();
    }

    private static int readU16(ByteBuf in) {
      need(in, 2);
      return in.readUnsignedShort();
    }

    private static int readInt(ByteBuf in) {
      need(in, 4);
      return in.readInt();
    }

    private static long readLong(ByteBuf in) {
      need(in, 8);
      return in.readLong();
    }

    /** A u32 count of items of {@code itemBytes} each, checked against the bytes left. */
    private static int readCount(ByteBuf in, int itemBytes) {
      long count = Integer.toUnsignedLong(readInt(in));
      if (count * itemBytes > in.readableBytes()) {
        throw new CorruptedFrameException(
            "count " + count + " needs " + count * itemBytes + " bytes, only " + in.readableBytes() + " left");
      }
      return (int) count;
    }

    private static String readString(ByteBuf in) {
      int length = readCount(in, 1);
      if (length > MAX_STRING_BYTES) {
        throw new CorruptedFrameException("string of " + length + " bytes is over " + MAX_STRING_BYTES);
      }
      // Strict: a lenient decoder would turn malformed bytes into U+FFFD, so the SQL run would not be the SQL sent.
      String value;
      try {
        value = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT).decode(in.nioBuffer(in.readerIndex(), length)).toString();
      } catch (CharacterCodingException e) {
        throw new CorruptedFrameException("a string of " + length + " bytes is not valid UTF-8");
      }
      in.skipBytes(length);
      return value;
    }

    private static byte[] readBytes(ByteBuf in) {
      int length = readCount(in, 1);
      byte[] bytes = new byte[length];
      in.readBytes(bytes);
      return bytes;
    }

    private static List<String> readList(ByteBuf in) {
      int count = readU16(in);
      List<String> list = new ArrayList<>(Math.min(count, in.readableBytes() / 4));
      for (int i = 0; i < count; i++) {
        list.add(readString(in));
      }
      return list;
    }

    private static Message.Open readOpen(ByteBuf in) {
      int streamId = readInt(in);
      String sql = readString(in);
      String dataset = readString(in);
      int batchRows = readInt(in);
      int credits = readInt(in);
      long timeoutMillis = readLong(in);
      int flags = readU8(in);
      if ((flags & ~(Message.Open.SCHEMA_ONLY | Message.Open.PARAMETER_ROWS)) != 0) {
        throw new CorruptedFrameException("OPEN flags " + flags + " set bits this version does not know");
      }
      List<Object> parameters = readParameters(in);
      Map<String, String> options = readMap(in);
      byte[] rows = new byte[0];
      if ((flags & Message.Open.PARAMETER_ROWS) != 0) {
        rows = readBytes(in);
        if (rows.length == 0) {
          throw new CorruptedFrameException("OPEN announces parameter rows and carries none");
        }
      }
      return new Message.Open(streamId, sql, dataset, batchRows, credits, timeoutMillis, flags, parameters, options,
          rows);
    }

    private static List<Object> readParameters(ByteBuf in) {
      int count = readU16(in);
      List<Object> values = new ArrayList<>(Math.min(count, in.readableBytes()));
      for (int i = 0; i < count; i++) {
        values.add(readParameter(in));
      }
      return values;
    }

    private static Object readParameter(ByteBuf in) {
      int tag = readU8(in);
      return switch (tag) {
        case 0 -> QueryParameters.NULL;
        case 1 -> switch (readU8(in)) {
          case 0 -> false;
          case 1 -> true;
          default -> throw new CorruptedFrameException("a boolean parameter is neither 0 nor 1");
        };
        case 2 -> (byte) readU8(in);
        case 3 -> (short) readU16(in);
        case 4 -> readInt(in);
        case 5 -> readLong(in);
        case 6 -> Float.intBitsToFloat(readInt(in));
        case 7 -> Double.longBitsToDouble(readLong(in));
        case 8 -> canonical(readString(in), java.math.BigDecimal::new, "decimal");
        case 9 -> readString(in);
        case 10 -> readBytes(in);
        case 11 -> parse(readLong(in), java.time.LocalDate::ofEpochDay, "date");
        case 12 -> parse(readLong(in), java.time.LocalTime::ofNanoOfDay, "time");
        case 13 -> {
          long seconds = readLong(in);
          int nanos = readInt(in);
          yield parse(seconds, s -> java.time.LocalDateTime.ofEpochSecond(s, nanos, java.time.ZoneOffset.UTC),
              "timestamp");
        }
        case 14 -> {
          long seconds = readLong(in);
          int nanos = readInt(in);
          int offset = readInt(in);
          if (nanos < 0 || nanos > 999_999_999) {
            throw new CorruptedFrameException("nanoseconds " + nanos + " are out of range");
          }
          yield parse(seconds, s -> java.time.OffsetDateTime.ofInstant(java.time.Instant.ofEpochSecond(s, nanos),
              java.time.ZoneOffset.ofTotalSeconds(offset)), "timestamp with time zone");
        }
        case 15 -> new java.util.UUID(readLong(in), readLong(in));
        case 16 -> canonical(readString(in), java.math.BigInteger::new, "big integer");
        default -> throw new CorruptedFrameException("unknown parameter tag " + tag);
      };
    }

    /** A number sent as text must be in the form its type prints, so that it means one thing only. */
    private static <R> R canonical(String text, java.util.function.Function<String, R> parser, String what) {
      R value = parse(text, parser, what);
      if (!value.toString().equals(text)) {
        throw new CorruptedFrameException("a " + what + " parameter is not in canonical form: " + text);
      }
      return value;
    }

    private static <T, R> R parse(T raw, java.util.function.Function<T, R> parser, String what) {
      try {
        return parser.apply(raw);
      } catch (RuntimeException e) {
        throw new CorruptedFrameException("not a " + what + " parameter: " + raw);
      }
    }

    private static Map<String, String> readMap(ByteBuf in) {
      int count = readU16(in);
      Map<String, String> map = new LinkedHashMap<>();
      for (int i = 0; i < count; i++) {
        String key = readString(in);
        String value = readString(in);
        if (map.put(key, value) != null) {
          throw new CorruptedFrameException("key " + key + " appears twice");
        }
      }
      return map;
    }

    private static void need(ByteBuf in, int bytes) {
      if (in.readableBytes() < bytes) {
        throw new CorruptedFrameException("frame ends early: needed " + bytes + " more bytes");
      }
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
          writeParameters(out, m.parameters());
          writeMap(out, m.options());
          if (m.parameterRows().length > 0) {
            out.writeInt(m.parameterRows().length);
            out.writeBytes(m.parameterRows());
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
        case Message.Batch m -> writeBatchHeader(out, m.header());
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
          writeMap(out, m.options());
        }
        case Message.Describe m -> DescriptionCodec.writeDescribe(out, m);
        case Message.Described m -> DescriptionCodec.writeDescribed(out, m);
      }
    }

    private static void writeBatchHeader(ByteBuf out, BatchHeader header) {
      out.writeInt(header.streamId());
      out.writeLong(header.batchId());
      out.writeShort(header.parts().size());
      for (BatchPart part : header.parts()) {
        out.writeLong(part.dictionaryId());
        out.writeByte(part.delta() ? 1 : 0);
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
      }
    }

    private static int estimate(Message message) {
      if (message instanceof Message.Batch batch) {
        int size = 32;
        for (BatchPart part : batch.header().parts()) {
          size += 32 + part.nodes().size() * 16 + part.buffers().size() * 20;
        }
        return size;
      }
      if (message instanceof Message.Open open) {
        return 64 + open.sql().length() * 3 + open.dataset().length() * 3;
      }
      if (message instanceof Message.Opened opened) {
        return 16 + opened.schema().length;
      }
      if (message instanceof Message.Ingest ingest) {
        return 64 + ingest.table().length() * 3 + ingest.schema().length;
      }
      return 256;
    }

    private static void writeString(ByteBuf out, String value) {
      int lengthIndex = out.writerIndex();
      out.writeInt(0);
      int written = ByteBufUtil.writeUtf8(out, value);
      out.setInt(lengthIndex, written);
    }

    private static void writeList(ByteBuf out, List<String> values) {
      checkCount(values.size());
      out.writeShort(values.size());
      for (String value : values) {
        writeString(out, value);
      }
    }

    private static void writeParameters(ByteBuf out, List<Object> values) {
      checkCount(values.size());
      out.writeShort(values.size());
      for (Object value : values) {
        writeParameter(out, value);
      }
    }

    private static void writeParameter(ByteBuf out, Object value) {
      switch (value) {
        case QueryParameters.Null ignored -> out.writeByte(0);
        case Boolean v -> {
          out.writeByte(1);
          out.writeByte(v ? 1 : 0);
        }
        case Byte v -> {
          out.writeByte(2);
          out.writeByte(v);
        }
        case Short v -> {
          out.writeByte(3);
          out.writeShort(v);
        }
        case Integer v -> {
          out.writeByte(4);
          out.writeInt(v);
        }
        case Long v -> {
          out.writeByte(5);
          out.writeLong(v);
        }
        case Float v -> {
          out.writeByte(6);
          out.writeInt(Float.floatToRawIntBits(v));
        }
        case Double v -> {
          out.writeByte(7);
          out.writeLong(Double.doubleToRawLongBits(v));
        }
        case java.math.BigDecimal v -> {
          out.writeByte(8);
          writeString(out, v.toString());
        }
        case String v -> {
          out.writeByte(9);
          writeString(out, v);
        }
        case byte[] v -> {
          out.writeByte(10);
          out.writeInt(v.length);
          out.writeBytes(v);
        }
        case java.time.LocalDate v -> {
          out.writeByte(11);
          out.writeLong(v.toEpochDay());
        }
        case java.time.LocalTime v -> {
          out.writeByte(12);
          out.writeLong(v.toNanoOfDay());
        }
        case java.time.LocalDateTime v -> {
          out.writeByte(13);
          out.writeLong(v.toEpochSecond(java.time.ZoneOffset.UTC));
          out.writeInt(v.getNano());
        }
        case java.time.OffsetDateTime v -> {
          out.writeByte(14);
          out.writeLong(v.toEpochSecond());
          out.writeInt(v.getNano());
          out.writeInt(v.getOffset().getTotalSeconds());
        }
        case java.util.UUID v -> {
          out.writeByte(15);
          out.writeLong(v.getMostSignificantBits());
          out.writeLong(v.getLeastSignificantBits());
        }
        case java.math.BigInteger v -> {
          out.writeByte(16);
          writeString(out, v.toString());
        }
        default -> throw new IllegalArgumentException("no wire form for a parameter of " + value.getClass());
      }
    }

    private static void writeMap(ByteBuf out, Map<String, String> map) {
      checkCount(map.size());
      out.writeShort(map.size());
      for (Map.Entry<String, String> entry : map.entrySet()) {
        writeString(out, entry.getKey());
        writeString(out, entry.getValue());
      }
    }

    private static void checkCount(int count) {
      if (count > 0xFFFF) {
        throw new IllegalArgumentException(count + " entries do not fit a u16 count");
      }
    }
  }
}
