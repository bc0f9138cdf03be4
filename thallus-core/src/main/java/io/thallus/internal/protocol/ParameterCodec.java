package io.thallus.internal.protocol;

import io.thallus.ListParameter;
import static io.thallus.internal.protocol.WireReader.readBytes;
import static io.thallus.internal.protocol.WireReader.readInt;
import static io.thallus.internal.protocol.WireReader.readLong;
import static io.thallus.internal.protocol.WireReader.readString;
import static io.thallus.internal.protocol.WireReader.readU16;
import static io.thallus.internal.protocol.WireReader.readU8;
import static io.thallus.internal.protocol.WireWriter.writeCount;
import static io.thallus.internal.protocol.WireWriter.writeString;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.CorruptedFrameException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Function;

/**
 * The parameters of an OPEN, both ways: a u16 count, then each value as a tag byte and the tag's fields (the tags
 * are listed in {@link MessageCodec}'s table). Reading and writing sit side by side so that a tag means the same
 * bytes in both directions. A value read must be one the tag can mean (a date in range, a number in canonical
 * form), or the frame is corrupt.
 */
final class ParameterCodec {
  private ParameterCodec() {}

  static List<Object> readParameters(ByteBuf in) {
    int count = readU16(in);
    List<Object> values = new ArrayList<>(Math.min(count, in.readableBytes()));
    for (int i = 0; i < count; i++) {
      values.add(readParameter(in, 0));
    }
    return values;
  }

  private static Object readParameter(ByteBuf in, int depth) {
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
      case 8 -> canonical(readString(in), BigDecimal::new, "decimal");
      case 9 -> readString(in);
      case 10 -> readBytes(in);
      case 11 -> parse(readLong(in), LocalDate::ofEpochDay, "date");
      case 12 -> parse(readLong(in), LocalTime::ofNanoOfDay, "time");
      case 13 -> {
        long seconds = readLong(in);
        int nanos = readInt(in);
        yield parse(seconds, s -> LocalDateTime.ofEpochSecond(s, nanos, ZoneOffset.UTC), "timestamp");
      }
      case 14 -> {
        long seconds = readLong(in);
        int nanos = readInt(in);
        int offset = readInt(in);
        if (nanos < 0 || nanos > 999_999_999) {
          throw new CorruptedFrameException("nanoseconds " + nanos + " are out of range");
        }
        yield parse(seconds, s -> OffsetDateTime.ofInstant(Instant.ofEpochSecond(s, nanos),
            ZoneOffset.ofTotalSeconds(offset)), "timestamp with time zone");
      }
      case 15 -> new UUID(readLong(in), readLong(in));
      case 16 -> canonical(readString(in), BigInteger::new, "big integer");
      case 17 -> readList(in, depth);
      default -> throw new CorruptedFrameException("unknown parameter tag " + tag);
    };
  }

  /** A number sent as text must be in the form its type prints, so that it means one thing only. */
  private static <R> R canonical(String text, Function<String, R> parser, String what) {
    R value = parse(text, parser, what);
    if (!value.toString().equals(text)) {
      throw new CorruptedFrameException("a " + what + " parameter is not in canonical form: " + text);
    }
    return value;
  }

  private static <T, R> R parse(T raw, Function<T, R> parser, String what) {
    try {
      return parser.apply(raw);
    } catch (RuntimeException e) {
      throw new CorruptedFrameException("not a " + what + " parameter: " + raw);
    }
  }

  /**
   * A list: its element type, then its elements, each a parameter (null as tag 0). Lists nest at most
   * {@link ListParameter#MAX_DEPTH} deep, and a count is never more than the bytes left, so a frame cannot make the
   * reader recurse or allocate without bound.
   */
  private static ListParameter readList(ByteBuf in, int depth) {
    if (depth >= ListParameter.MAX_DEPTH) {
      throw new CorruptedFrameException("list parameters nest more than " + ListParameter.MAX_DEPTH + " deep");
    }
    String elementType = readString(in);
    int count = readInt(in);
    if (count < 0 || count > in.readableBytes()) {
      throw new CorruptedFrameException("a list parameter of " + count + " elements in " + in.readableBytes()
          + " bytes");
    }
    List<Object> elements = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      Object element = readParameter(in, depth + 1);
      elements.add(element == QueryParameters.NULL ? null : element);
    }
    try {
      return new ListParameter(elementType, elements);
    } catch (IllegalArgumentException e) {
      throw new CorruptedFrameException(e.getMessage());
    }
  }

  static void writeParameters(ByteBuf out, List<Object> values) {
    writeCount(out, values.size());
    for (Object value : values) {
      writeParameter(out, value);
    }
  }

  private static void writeParameter(ByteBuf out, Object value) {
    switch (value) {
      // SQL NULL: the marker at the top, null inside a list.
      case null -> out.writeByte(0);
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
      case BigDecimal v -> {
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
      case LocalDate v -> {
        out.writeByte(11);
        out.writeLong(v.toEpochDay());
      }
      case LocalTime v -> {
        out.writeByte(12);
        out.writeLong(v.toNanoOfDay());
      }
      case LocalDateTime v -> {
        out.writeByte(13);
        out.writeLong(v.toEpochSecond(ZoneOffset.UTC));
        out.writeInt(v.getNano());
      }
      case OffsetDateTime v -> {
        out.writeByte(14);
        out.writeLong(v.toEpochSecond());
        out.writeInt(v.getNano());
        out.writeInt(v.getOffset().getTotalSeconds());
      }
      case UUID v -> {
        out.writeByte(15);
        out.writeLong(v.getMostSignificantBits());
        out.writeLong(v.getLeastSignificantBits());
      }
      case BigInteger v -> {
        out.writeByte(16);
        writeString(out, v.toString());
      }
      case ListParameter v -> {
        out.writeByte(17);
        writeString(out, v.elementType());
        out.writeInt(v.elements().size());
        for (Object element : v.elements()) {
          writeParameter(out, element);
        }
      }
      default -> throw new IllegalArgumentException("no wire form for a parameter of " + value.getClass());
    }
  }
}
