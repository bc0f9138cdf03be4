package io.thallus;

import java.util.Locale;

/**
 * How a batch's body travels: as it is, or each buffer compressed the way Arrow's IPC format compresses a record batch
 * body ({@code BodyCompression}, method BUFFER): per buffer, its uncompressed length as an 8-byte little-endian integer
 * (-1: the buffer follows uncompressed, not worth compressing), then the codec's bytes. The bytes are standard Arrow,
 * so any Arrow reader can decompress them. A receiver decompresses, within its memory bounds, before it checks the
 * batch.
 */
public enum BatchCompression {
  /** Buffers travel as they are. */
  NONE(-1),
  /** Each buffer a standard LZ4 frame (Arrow's {@code LZ4_FRAME}): fast, a moderate ratio. */
  LZ4_FRAME(0),
  /** Each buffer a standard Zstandard frame (Arrow's {@code ZSTD}): slower, a better ratio. */
  ZSTD(1);

  private final byte arrowCodec;

  BatchCompression(int arrowCodec) {
    this.arrowCodec = (byte) arrowCodec;
  }

  /** The codec's number in Arrow's format ({@code CompressionType}); -1 for {@link #NONE}. */
  public byte arrowCodec() {
    return arrowCodec;
  }

  /** The compression of Arrow's codec number {@code codec} (-1 for none); throws IllegalArgumentException if unknown. */
  public static BatchCompression ofArrowCodec(byte codec) {
    for (BatchCompression compression : values()) {
      if (compression.arrowCodec == codec) {
        return compression;
      }
    }
    throw new IllegalArgumentException("Arrow compression codec " + codec + " is not one Thallus knows "
        + "(LZ4_FRAME = 0, ZSTD = 1)");
  }

  /**
   * The compression named {@code name}, as a setting spells it: {@code none}, {@code lz4} (or {@code lz4_frame}),
   * {@code zstd}, in any case; throws IllegalArgumentException naming the choices otherwise.
   */
  public static BatchCompression parse(String name) {
    String key = name == null ? "" : name.trim().toLowerCase(Locale.ROOT);
    return switch (key) {
      case "none" -> NONE;
      case "lz4", "lz4_frame" -> LZ4_FRAME;
      case "zstd" -> ZSTD;
      default -> throw new IllegalArgumentException("unknown batch compression '" + name
          + "' (choose none, lz4 or zstd)");
    };
  }
}
