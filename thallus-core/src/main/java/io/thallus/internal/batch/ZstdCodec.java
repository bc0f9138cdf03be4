package io.thallus.internal.batch;

import com.github.luben.zstd.Zstd;
import java.nio.ByteBuffer;

/**
 * Arrow's {@code ZSTD}: each buffer one standard Zstandard frame, at level 1 (Spark's default level: the fast end).
 * Decoded with zstd's bounded one-shot API: it never writes past the room it is given, and an error (damaged input,
 * more output than the room) comes back as an error code.
 */
final class ZstdCodec implements BufferCodec {
  static final ZstdCodec INSTANCE = new ZstdCodec();
  private static final int LEVEL = 1;

  private ZstdCodec() {}

  /** Whether zstd-jni and its native library load here; asked once (the answer cannot change in a JVM). */
  static boolean available() {
    return Availability.PRESENT;
  }

  /** Holds the answer: its class initializes at the first ask, so a JVM that never asks never loads zstd. */
  private static final class Availability {
    static final boolean PRESENT = probe();

    private static boolean probe() {
      try {
        return Zstd.compressBound(1) > 0;
      } catch (LinkageError absent) {
        // NoClassDefFoundError (no jar), UnsatisfiedLinkError (no native library for this platform),
        // IllegalAccessError (a module layer that does not read it).
        return false;
      }
    }
  }

  @Override
  public int maxCompressedLength(int length) {
    return Math.toIntExact(Zstd.compressBound(length));
  }

  @Override
  public int compress(ByteBuffer src, int srcOff, int length, ByteBuffer dst, int dstOff, int dstMax) {
    long written;
    if (src.isDirect() && dst.isDirect()) {
      written = Zstd.compressDirectByteBuffer(dst, dstOff, dstMax, src, srcOff, length, LEVEL);
    } else {
      written = Zstd.compressByteArray(array(dst), dst.arrayOffset() + dstOff, dstMax, array(src),
          src.arrayOffset() + srcOff, length, LEVEL);
    }
    if (Zstd.isError(written)) {
      throw new IllegalStateException("zstd could not compress " + length + " bytes: " + Zstd.getErrorName(written));
    }
    return (int) written;
  }

  @Override
  public void decompress(ByteBuffer src, int srcOff, int srcLen, ByteBuffer dst, int dstOff, int length) {
    long made;
    try {
      if (src.isDirect() && dst.isDirect()) {
        made = Zstd.decompressDirectByteBuffer(dst, dstOff, length, src, srcOff, srcLen);
      } else {
        made = Zstd.decompressByteArray(array(dst), dst.arrayOffset() + dstOff, length, array(src),
            src.arrayOffset() + srcOff, srcLen);
      }
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("malformed zstd frame (or one that makes more than the " + length
          + " bytes declared): " + e.getMessage(), e);
    }
    if (Zstd.isError(made)) {
      throw new IllegalArgumentException("malformed zstd frame (or one that makes more than the " + length
          + " bytes declared): " + Zstd.getErrorName(made));
    }
    if (made != length) {
      throw new IllegalArgumentException("zstd frame makes " + made + " bytes, its buffer declared " + length);
    }
  }

  private static byte[] array(ByteBuffer buffer) {
    if (!buffer.hasArray()) {
      throw new IllegalStateException("zstd needs two direct buffers or two heap arrays");
    }
    return buffer.array();
  }

  @Override
  public long maxDecompressedLength(long srcLen) {
    // A zstd frame may stand for far more than its bytes (repeated blocks): the memory bound is the check.
    return Long.MAX_VALUE;
  }
}
