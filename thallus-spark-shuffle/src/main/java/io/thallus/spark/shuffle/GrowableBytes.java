package io.thallus.spark.shuffle;

import java.io.IOException;
import java.io.OutputStream;
import java.util.Arrays;

/** A byte array that grows as it is written, and hands out its array without a copy (unlike ByteArrayOutputStream). */
final class GrowableBytes extends OutputStream {
  private byte[] bytes;
  private int size;

  GrowableBytes(int capacity) {
    bytes = new byte[Math.max(16, capacity)];
  }

  @Override
  public void write(int b) {
    ensure(1);
    bytes[size++] = (byte) b;
  }

  @Override
  public void write(byte[] src, int offset, int length) {
    ensure(length);
    System.arraycopy(src, offset, bytes, size, length);
    size += length;
  }

  void writeInt(int value) {
    ensure(4);
    bytes[size] = (byte) (value >>> 24);
    bytes[size + 1] = (byte) (value >>> 16);
    bytes[size + 2] = (byte) (value >>> 8);
    bytes[size + 3] = (byte) value;
    size += 4;
  }

  /** Room for {@code length} more bytes at {@link #size()}, for a caller that writes into {@link #array()}. */
  void ensure(int length) {
    long needed = (long) size + length;
    if (needed > bytes.length) {
      if (needed > Integer.MAX_VALUE - 16) {
        throw new IllegalStateException("A shuffle buffer cannot pass 2 GiB; raise spark.sql.shuffle.partitions");
      }
      bytes = Arrays.copyOf(bytes, (int) Math.max(needed, Math.min(Integer.MAX_VALUE - 16L, bytes.length * 2L)));
    }
  }

  void advance(int length) {
    size += length;
  }

  byte[] array() {
    return bytes;
  }

  /** The bytes the buffer takes on the heap. */
  int capacity() {
    return bytes.length;
  }

  int size() {
    return size;
  }

  void reset() {
    size = 0;
  }

  void writeTo(OutputStream out) throws IOException {
    out.write(bytes, 0, size);
  }
}
