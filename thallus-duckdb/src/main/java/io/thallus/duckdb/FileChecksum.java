package io.thallus.duckdb;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.engine.CancelSignal;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The checksum a description gives a file, so that a reader of several servers can tell a replica of a file from
 * a different file of the same name: SHA-256 over the file's size (8 bytes, big-endian) and then
 *
 * <ul>
 *   <li>a file of at most {@link #WHOLE_FILE_BYTES}, or one that is not Parquet (CSV, JSON, whose rows a
 *       description counts by reading them whole anyway): all its bytes;
 *   <li>a larger Parquet file: its footer (the Thrift metadata and the 8-byte trailer), which holds every row
 *       group's rows, every column chunk's offsets and compressed sizes, and the writer's statistics. Reading it
 *       costs what DuckDB's {@code parquet_metadata} already reads to count the rows, not a pass over the data.
 * </ul>
 *
 * A footer larger than {@link #MAX_FOOTER_BYTES} is refused (OUT_OF_RANGE) rather than read.
 */
final class FileChecksum {
  /** Files up to this size are hashed whole, whatever their format. */
  static final long WHOLE_FILE_BYTES = 1L << 20;
  /** The largest Parquet footer hashed. */
  static final int MAX_FOOTER_BYTES = 64 << 20;
  private static final int CHUNK = 1 << 16;
  private static final byte[] PARQUET_MAGIC = {'P', 'A', 'R', '1'};

  private FileChecksum() {}

  /** The checksum of {@code file} (a real path, checked to lie under the data root), in lowercase hex. */
  static String of(Path file, boolean parquet, CancelSignal cancel) {
    MessageDigest digest;
    try {
      digest = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java platform has SHA-256", e);
    }
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
      long size = channel.size();
      digest.update(ByteBuffer.allocate(Long.BYTES).putLong(size).flip());
      long start = 0;
      if (parquet && size > WHOLE_FILE_BYTES) {
        start = size - footerBytes(channel, file, size);
      }
      ByteBuffer chunk = ByteBuffer.allocate(CHUNK);
      long position = start;
      while (position < size) {
        if (cancel.isCancelled()) {
          throw ThallusException.of(StatusCode.CANCELLED, "the description was cancelled");
        }
        chunk.clear();
        int read = channel.read(chunk, position);
        if (read < 0) {
          throw ThallusException.of(StatusCode.NOT_FOUND, "file " + file + " became shorter while it was read");
        }
        position += read;
        digest.update(chunk.flip());
      }
    } catch (IOException e) {
      throw ThallusException.of(StatusCode.NOT_FOUND, "file " + file + " of the dataset cannot be read: "
          + e.getMessage(), e);
    }
    return HexFormat.of().formatHex(digest.digest());
  }

  /** The footer's length with its 8-byte trailer (a little-endian length and {@code PAR1}). */
  private static long footerBytes(FileChannel channel, Path file, long size) throws IOException {
    ByteBuffer trailer = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
    while (trailer.hasRemaining()) {
      if (channel.read(trailer, size - 8 + trailer.position()) < 0) {
        throw ThallusException.of(StatusCode.NOT_FOUND, "file " + file + " became shorter while it was read");
      }
    }
    trailer.flip();
    long metadata = Integer.toUnsignedLong(trailer.getInt());
    byte[] magic = new byte[4];
    trailer.get(magic);
    if (!java.util.Arrays.equals(magic, PARQUET_MAGIC) || metadata + 8 > size) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "file " + file + " is not a Parquet file (no footer)");
    }
    if (metadata + 8 > MAX_FOOTER_BYTES) {
      throw ThallusException.of(StatusCode.OUT_OF_RANGE, "file " + file + " has a Parquet footer of " + metadata
          + " bytes, more than the " + MAX_FOOTER_BYTES + " a description reads");
    }
    return metadata + 8;
  }
}
