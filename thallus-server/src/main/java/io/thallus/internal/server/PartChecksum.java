package io.thallus.internal.server;

import io.thallus.DatasetDescription;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

/**
 * The checksum of a part of a sharded dataset: SHA-256 over each of its files in name order, as its name inside the
 * part, its size and then, for a Parquet file, its footer (the file metadata: every row group's rows, each column
 * chunk's offsets, sizes and statistics), for any other file its whole contents. A Parquet footer is read with one
 * seek, so describing a large part costs no read of its data; and two writes of different rows give different
 * footers (the column chunks' sizes and offsets, row counts and min/max differ). What it does not see: a page's bytes
 * changed in place with the sizes and statistics unchanged (a disk corruption), which DuckDB's page checksums catch
 * when the page is read. See docs/sharding.md.
 */
final class PartChecksum {
  private static final byte[] PARQUET_MAGIC = "PAR1".getBytes(StandardCharsets.US_ASCII);
  /** The largest footer read; a file claiming a larger one is hashed whole. */
  private static final int MAX_FOOTER_BYTES = 64 << 20;

  private PartChecksum() {}

  /** The checksum of the part at {@code partPath} made of {@code files} (their paths as the engine gave them). */
  static String of(Path partPath, List<DatasetDescription.Part> files) {
    MessageDigest digest = sha256();
    for (DatasetDescription.Part part : files) {
      Path file = Path.of(((DatasetDescription.FilePart) part).path());
      String name = Files.isDirectory(partPath) ? partPath.relativize(file).toString() : file.getFileName().toString();
      byte[] nameBytes = name.getBytes(StandardCharsets.UTF_8);
      digest.update(ByteBuffer.allocate(Integer.BYTES).putInt(nameBytes.length).flip());
      digest.update(nameBytes);
      hashFile(file, digest);
    }
    return HexFormat.of().formatHex(digest.digest());
  }

  private static void hashFile(Path file, MessageDigest digest) {
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
      long size = channel.size();
      digest.update(ByteBuffer.allocate(Long.BYTES).putLong(size).flip());
      long footerStart = parquetFooterStart(channel, size);
      long from = footerStart < 0 ? 0 : footerStart;
      ByteBuffer buffer = ByteBuffer.allocate(1 << 16);
      long position = from;
      while (position < size) {
        buffer.clear();
        int read = channel.read(buffer, position);
        if (read < 0) {
          break;
        }
        buffer.flip();
        digest.update(buffer);
        position += read;
      }
    } catch (IOException e) {
      throw ThallusException.of(StatusCode.NOT_FOUND, "cannot read " + file + " to checksum its part: "
          + e.getMessage(), e);
    }
  }

  /** Where the footer (metadata, its length, the magic) of a Parquet file starts, or -1 if it is not one. */
  private static long parquetFooterStart(FileChannel channel, long size) throws IOException {
    if (size < 12) {
      return -1;
    }
    ByteBuffer tail = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
    while (tail.hasRemaining()) {
      if (channel.read(tail, size - 8 + tail.position()) < 0) {
        return -1;
      }
    }
    tail.flip();
    int metadataLength = tail.getInt();
    byte[] magic = new byte[4];
    tail.get(magic);
    if (!java.util.Arrays.equals(magic, PARQUET_MAGIC) || metadataLength <= 0 || metadataLength > MAX_FOOTER_BYTES
        || metadataLength > size - 12) {
      return -1;
    }
    return size - 8 - metadataLength;
  }

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JDK has no SHA-256", e);
    }
  }
}
