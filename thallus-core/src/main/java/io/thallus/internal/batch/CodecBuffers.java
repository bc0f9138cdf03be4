package io.thallus.internal.batch;

import java.nio.ByteBuffer;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.util.MemoryUtil;

/**
 * Arrow memory as the codecs take it: a direct view where the JVM grants views ({@link ArrowViews}), else a heap copy
 * (read side) or a heap array copied back afterwards (write side). And Arrow's compressed buffer prefix, the
 * uncompressed length as an 8-byte little-endian integer.
 */
final class CodecBuffers {
  /** Arrow's body compression method BUFFER (its only one): each buffer compressed on its own. */
  static final byte BUFFER_METHOD = 0;
  /** Arrow's prefix: the buffer's uncompressed length. */
  static final int PREFIX_BYTES = 8;
  /** The prefix that says the bytes after it are the buffer as it is (Arrow's NO_COMPRESSION_LENGTH). */
  static final long STORED = -1;

  private CodecBuffers() {}

  /** {@code length} bytes of {@code buffer} at {@code index} to read: a view, or a heap copy. */
  static ByteBuffer readable(ArrowBuf buffer, long index, int length) {
    ByteBuffer view = ArrowViews.viewOrNull(buffer, index, length);
    if (view != null) {
      return view;
    }
    byte[] copy = new byte[length];
    buffer.getBytes(index, copy, 0, length);
    return ByteBuffer.wrap(copy);
  }

  /** {@code length} bytes of {@code buffer} at {@code index} to write: a view, or a heap array to copy back. */
  static ByteBuffer writable(ArrowBuf buffer, long index, int length) {
    ByteBuffer view = ArrowViews.viewOrNull(buffer, index, length);
    return view != null ? view : ByteBuffer.wrap(new byte[length]);
  }

  /** Puts what was written into a heap array from {@link #writable} back into {@code buffer}; nothing for a view. */
  static void writeBack(ByteBuffer written, ArrowBuf buffer, long index, int length) {
    if (!written.isDirect()) {
      buffer.setBytes(index, written.array(), 0, length);
    }
  }

  static long prefix(ArrowBuf buffer, long index) {
    long value = buffer.getLong(index);
    return MemoryUtil.LITTLE_ENDIAN ? value : Long.reverseBytes(value);
  }

  static void setPrefix(ArrowBuf buffer, long index, long value) {
    buffer.setLong(index, MemoryUtil.LITTLE_ENDIAN ? value : Long.reverseBytes(value));
  }

  static long align(long offset) {
    return (offset + 7) & ~7L;
  }
}
