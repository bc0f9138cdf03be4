package io.thallus.spark.shuffle;

import com.github.luben.zstd.Zstd;
import java.util.Locale;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4FastDecompressor;

/** How a frame's body (one Arrow record batch message) is compressed; the byte is written in every frame. */
enum FrameCodec {
  NONE(0),
  LZ4(1),
  ZSTD(2);

  /** zstd's level 1: Spark's own zstd default, fast and still smaller than lz4. */
  private static final int ZSTD_LEVEL = 1;
  private static final LZ4Factory LZ4_FACTORY = LZ4Factory.fastestInstance();

  final byte id;

  FrameCodec(int id) {
    this.id = (byte) id;
  }

  static FrameCodec named(String name) {
    return switch (name.trim().toLowerCase(Locale.ROOT)) {
      case "lz4" -> LZ4;
      case "zstd" -> ZSTD;
      case "none" -> NONE;
      default -> throw new IllegalArgumentException(
          ShuffleOptions.CODEC + " must be lz4, zstd or none, not '" + name + "'");
    };
  }

  static FrameCodec ofId(byte id) {
    for (FrameCodec codec : values()) {
      if (codec.id == id) {
        return codec;
      }
    }
    throw new IllegalStateException("Corrupt shuffle frame: unknown codec id " + id);
  }

  /** The most bytes {@link #compress} may write for {@code length} input bytes. */
  int maxCompressedLength(int length) {
    return switch (this) {
      case NONE -> length;
      case LZ4 -> lz4Compressor().maxCompressedLength(length);
      case ZSTD -> Math.toIntExact(Zstd.compressBound(length));
    };
  }

  /** Compresses {@code src[0, length)} into {@code dst} from {@code at} and returns the compressed length. */
  int compress(byte[] src, int length, byte[] dst, int at) {
    return switch (this) {
      case NONE -> {
        System.arraycopy(src, 0, dst, at, length);
        yield length;
      }
      case LZ4 -> lz4Compressor().compress(src, 0, length, dst, at, dst.length - at);
      case ZSTD -> {
        long written = Zstd.compressByteArray(dst, at, dst.length - at, src, 0, length, ZSTD_LEVEL);
        if (Zstd.isError(written)) {
          throw new IllegalStateException("zstd compression failed: " + Zstd.getErrorName(written));
        }
        yield (int) written;
      }
    };
  }

  /** Decompresses {@code src[0, length)} into exactly {@code rawLength} bytes of {@code dst}. */
  void decompress(byte[] src, int length, byte[] dst, int rawLength) {
    switch (this) {
      case NONE -> {
        if (length != rawLength) {
          throw new IllegalStateException("Corrupt shuffle frame: " + length + " stored bytes for " + rawLength);
        }
        System.arraycopy(src, 0, dst, 0, length);
      }
      case LZ4 -> {
        int read = lz4Decompressor().decompress(src, 0, dst, 0, rawLength);
        if (read != length) {
          throw new IllegalStateException("Corrupt shuffle frame: lz4 read " + read + " of " + length + " bytes");
        }
      }
      case ZSTD -> {
        long written = Zstd.decompressByteArray(dst, 0, rawLength, src, 0, length);
        if (Zstd.isError(written) || written != rawLength) {
          throw new IllegalStateException("Corrupt shuffle frame: zstd gave " + written + " of " + rawLength);
        }
      }
    }
  }

  private static LZ4Compressor lz4Compressor() {
    return LZ4_FACTORY.fastCompressor();
  }

  private static LZ4FastDecompressor lz4Decompressor() {
    return LZ4_FACTORY.fastDecompressor();
  }
}
