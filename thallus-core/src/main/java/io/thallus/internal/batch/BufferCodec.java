package io.thallus.internal.batch;

import io.thallus.BatchCompression;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.nio.ByteBuffer;

/**
 * One codec of Arrow's body compression, on one buffer at a time: the codec's own bytes only (the 8-byte length
 * prefix of Arrow's compressed buffer is the caller's). Offsets are absolute; no buffer's position moves. Works on
 * direct and heap buffers alike.
 */
interface BufferCodec {
  /**
   * The codec of {@code compression}; NONE has none. zstd is an optional dependency (a client such as the JDBC
   * driver's one jar leaves its native library out): without it ZSTD is UNIMPLEMENTED here, named so.
   */
  static BufferCodec of(BatchCompression compression) {
    return switch (compression) {
      case LZ4_FRAME -> Lz4FrameCodec.INSTANCE;
      case ZSTD -> {
        if (!ZstdCodec.available()) {
          throw ThallusException.of(StatusCode.UNIMPLEMENTED, "ZSTD body compression needs zstd-jni "
              + "(com.github.luben:zstd-jni) on this JVM's class or module path; it is not there");
        }
        yield ZstdCodec.INSTANCE;
      }
      case NONE -> throw new IllegalArgumentException("NONE has no codec");
    };
  }

  /** The most bytes {@link #compress} may write for {@code length} bytes. */
  int maxCompressedLength(int length);

  /** Compresses {@code length} bytes at {@code srcOff} into {@code dst} at {@code dstOff}; answers the bytes written. */
  int compress(ByteBuffer src, int srcOff, int length, ByteBuffer dst, int dstOff, int dstMax);

  /**
   * Decompresses the {@code srcLen} bytes at {@code srcOff}, which must make exactly {@code length} bytes, into
   * {@code dst} at {@code dstOff}, never writing past {@code dstOff + length} nor reading past {@code srcOff + srcLen},
   * whatever the input holds. Throws IllegalArgumentException naming what is wrong with hostile or damaged input.
   */
  void decompress(ByteBuffer src, int srcOff, int srcLen, ByteBuffer dst, int dstOff, int length);

  /** The most bytes {@code srcLen} honest compressed bytes can make, checked before any memory is taken for them. */
  long maxDecompressedLength(long srcLen);
}
