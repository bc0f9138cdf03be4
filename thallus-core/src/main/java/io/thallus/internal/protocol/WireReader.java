package io.thallus.internal.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.CorruptedFrameException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the control protocol's field types from a frame (see {@link MessageCodec} for them), each checked against the
 * bytes left: a peer's count never makes the reader allocate or read past the frame. What does not parse is a
 * {@link CorruptedFrameException} naming the problem.
 */
final class WireReader {
  /** Longest string a peer may send (SQL text included); the frame limit usually bites first. */
  static final int MAX_STRING_BYTES = 64 << 20;

  private WireReader() {}

  static int readU8(ByteBuf in) {
    need(in, 1);
    return in.readUnsignedByte();
  }

  static int readU16(ByteBuf in) {
    need(in, 2);
    return in.readUnsignedShort();
  }

  static int readInt(ByteBuf in) {
    need(in, 4);
    return in.readInt();
  }

  static long readLong(ByteBuf in) {
    need(in, 8);
    return in.readLong();
  }

  /** A u32 count of items of {@code itemBytes} each, checked against the bytes left. */
  static int readCount(ByteBuf in, int itemBytes) {
    long count = Integer.toUnsignedLong(readInt(in));
    if (count * itemBytes > in.readableBytes()) {
      throw new CorruptedFrameException(
          "count " + count + " needs " + count * itemBytes + " bytes, only " + in.readableBytes() + " left");
    }
    return (int) count;
  }

  static String readString(ByteBuf in) {
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

  static byte[] readBytes(ByteBuf in) {
    int length = readCount(in, 1);
    byte[] bytes = new byte[length];
    in.readBytes(bytes);
    return bytes;
  }

  static List<String> readList(ByteBuf in) {
    int count = readU16(in);
    List<String> list = new ArrayList<>(Math.min(count, in.readableBytes() / 4));
    for (int i = 0; i < count; i++) {
      list.add(readString(in));
    }
    return list;
  }

  static Map<String, String> readMap(ByteBuf in) {
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
