package io.thallus.internal.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.util.List;
import java.util.Map;

/**
 * Writes the control protocol's variable-length field types (see {@link MessageCodec}); a collection too large for
 * its u16 count is refused here, on the sender's side, rather than sent truncated.
 */
final class WireWriter {
  private WireWriter() {}

  static void writeString(ByteBuf out, String value) {
    // The UTF-8 length is known only once written: the count goes in afterwards, saving a pass over the string.
    int lengthIndex = out.writerIndex();
    out.writeInt(0);
    int written = ByteBufUtil.writeUtf8(out, value);
    out.setInt(lengthIndex, written);
  }

  static void writeList(ByteBuf out, List<String> values) {
    writeCount(out, values.size());
    for (String value : values) {
      writeString(out, value);
    }
  }

  static void writeMap(ByteBuf out, Map<String, String> map) {
    writeCount(out, map.size());
    for (Map.Entry<String, String> entry : map.entrySet()) {
      writeString(out, entry.getKey());
      writeString(out, entry.getValue());
    }
  }

  /** A collection's u16 count. */
  static void writeCount(ByteBuf out, int count) {
    if (count > 0xFFFF) {
      throw new IllegalArgumentException(count + " entries do not fit a u16 count");
    }
    out.writeShort(count);
  }
}
