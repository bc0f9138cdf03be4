package io.thallus.internal.batch;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Exception;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;
import net.jpountz.xxhash.XXHash32;
import net.jpountz.xxhash.XXHashFactory;

/**
 * Arrow's {@code LZ4_FRAME}: each buffer one standard LZ4 frame (the LZ4 frame format, v1.6.x). What this writes:
 *
 * <pre>
 * magic 0x184D2204 (LE) | FLG 0x68 (version 01, independent blocks, content size) | BD 0x70 (4 MiB blocks)
 *   | content size u64 LE | HC (xxh32 of FLG..content size, second byte)
 *   | (block size u32 LE, high bit: stored as is | block bytes) * n | end mark 0 u32
 * </pre>
 *
 * What it reads: any such frame with independent blocks, with or without content size, block checksums and content
 * checksum (both checked); linked blocks and dictionary ids are refused by name. Blocks are decoded with lz4-java's
 * safe decompressor only (it checks every offset against the input and the output), never the "fast" one, which
 * trusts its input.
 */
final class Lz4FrameCodec implements BufferCodec {
  static final Lz4FrameCodec INSTANCE = new Lz4FrameCodec();

  private static final int MAGIC = 0x184D2204;
  private static final int FLG_VERSION_MASK = 0xC0;
  private static final int FLG_VERSION = 0x40;
  private static final int FLG_INDEPENDENT = 0x20;
  private static final int FLG_BLOCK_CHECKSUM = 0x10;
  private static final int FLG_CONTENT_SIZE = 0x08;
  private static final int FLG_CONTENT_CHECKSUM = 0x04;
  private static final int FLG_RESERVED = 0x02;
  private static final int FLG_DICTIONARY = 0x01;
  /** Block maximum size 4 MiB (code 7): fewer block headers, and each block's matches reach back 64 KiB anyway. */
  private static final int BD_4MB = 0x70;
  private static final int WRITE_BLOCK = 4 << 20;
  /** Magic, FLG, BD, content size, HC. */
  private static final int HEADER_BYTES = 4 + 1 + 1 + 8 + 1;
  private static final int UNCOMPRESSED_BIT = 0x80000000;
  /** One LZ4 sequence can stand for at most about 255 output bytes per input byte. */
  private static final long MAX_RATIO = 255;

  private final LZ4Compressor compressor = LZ4Factory.fastestInstance().fastCompressor();
  private final LZ4SafeDecompressor decompressor = LZ4Factory.fastestInstance().safeDecompressor();
  private final XXHash32 xxhash = XXHashFactory.fastestInstance().hash32();

  private Lz4FrameCodec() {}

  @Override
  public int maxCompressedLength(int length) {
    int blocks = Math.max(1, (length + WRITE_BLOCK - 1) / WRITE_BLOCK);
    return HEADER_BYTES + 4 + blocks * (4 + 16) + compressor.maxCompressedLength(length);
  }

  @Override
  public int compress(ByteBuffer src, int srcOff, int length, ByteBuffer dst, int dstOff, int dstMax) {
    ByteBuffer out = dst.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    out.putInt(dstOff, MAGIC);
    out.put(dstOff + 4, (byte) (FLG_VERSION | FLG_INDEPENDENT | FLG_CONTENT_SIZE));
    out.put(dstOff + 5, (byte) BD_4MB);
    out.putLong(dstOff + 6, length);
    out.put(dstOff + 14, (byte) ((xxhash.hash(out, dstOff + 4, 10, 0) >> 8) & 0xFF));
    int at = dstOff + HEADER_BYTES;
    int end = dstOff + dstMax;
    for (int done = 0; done < length; ) {
      int n = Math.min(WRITE_BLOCK, length - done);
      int written = compressor.compress(src, srcOff + done, n, out, at + 4, end - at - 4);
      if (written >= n) {
        // Incompressible: the block is stored as it is.
        out.putInt(at, n | UNCOMPRESSED_BIT);
        out.put(at + 4, src, srcOff + done, n);
        at += 4 + n;
      } else {
        out.putInt(at, written);
        at += 4 + written;
      }
      done += n;
    }
    out.putInt(at, 0);
    return at + 4 - dstOff;
  }

  @Override
  public void decompress(ByteBuffer src, int srcOff, int srcLen, ByteBuffer dst, int dstOff, int length) {
    ByteBuffer in = src.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    int end = srcOff + srcLen;
    if (srcLen < 7) {
      throw new IllegalArgumentException("an LZ4 frame of " + srcLen + " bytes is shorter than its header");
    }
    int magic = in.getInt(srcOff);
    if (magic != MAGIC) {
      throw new IllegalArgumentException(String.format("not an LZ4 frame (magic 0x%08x)", magic));
    }
    int flg = in.get(srcOff + 4) & 0xFF;
    int bd = in.get(srcOff + 5) & 0xFF;
    if ((flg & FLG_VERSION_MASK) != FLG_VERSION || (flg & FLG_RESERVED) != 0 || (bd & 0x8F) != 0) {
      throw new IllegalArgumentException(String.format("LZ4 frame descriptor (FLG 0x%02x, BD 0x%02x) is not "
          + "version 01 or sets reserved bits", flg, bd));
    }
    if ((flg & FLG_DICTIONARY) != 0) {
      throw new IllegalArgumentException("LZ4 frame names a dictionary, which Arrow's body compression never uses");
    }
    if ((flg & FLG_INDEPENDENT) == 0) {
      throw new IllegalArgumentException("LZ4 frame with linked blocks: only independent blocks are read");
    }
    int blockCode = (bd >> 4) & 0x7;
    if (blockCode < 4) {
      throw new IllegalArgumentException("LZ4 frame block size code " + blockCode + " is not one of 4..7");
    }
    int blockMax = 1 << (8 + 2 * blockCode);
    int at = srcOff + 6;
    if ((flg & FLG_CONTENT_SIZE) != 0) {
      need(at, 8 + 1, end);
      long contentSize = in.getLong(at);
      if (contentSize != length) {
        throw new IllegalArgumentException("LZ4 frame says it holds " + contentSize + " bytes, its buffer "
            + length);
      }
      at += 8;
    }
    need(at, 1, end);
    int headerChecksum = (xxhash.hash(in, srcOff + 4, at - srcOff - 4, 0) >> 8) & 0xFF;
    if ((in.get(at) & 0xFF) != headerChecksum) {
      throw new IllegalArgumentException("LZ4 frame header checksum does not match");
    }
    at++;
    int written = 0;
    while (true) {
      need(at, 4, end);
      int word = in.getInt(at);
      at += 4;
      if (word == 0) {
        break;
      }
      boolean stored = (word & UNCOMPRESSED_BIT) != 0;
      int blockLength = word & ~UNCOMPRESSED_BIT;
      if (blockLength > blockMax) {
        throw new IllegalArgumentException("LZ4 block of " + blockLength + " bytes is over the frame's block size "
            + blockMax);
      }
      need(at, blockLength, end);
      int room = length - written;
      if (stored) {
        if (blockLength > room) {
          throw new IllegalArgumentException("LZ4 frame makes more than the " + length + " bytes it declared");
        }
        dst.put(dstOff + written, in, at, blockLength);
        written += blockLength;
      } else {
        try {
          written += decompressor.decompress(in, at, blockLength, dst, dstOff + written, Math.min(room, blockMax));
        } catch (LZ4Exception e) {
          throw new IllegalArgumentException("malformed LZ4 block (or one that makes more than the " + length
              + " bytes declared): " + e.getMessage(), e);
        }
      }
      at += blockLength;
      if ((flg & FLG_BLOCK_CHECKSUM) != 0) {
        need(at, 4, end);
        if (in.getInt(at) != xxhash.hash(in, at - blockLength, blockLength, 0)) {
          throw new IllegalArgumentException("LZ4 block checksum does not match");
        }
        at += 4;
      }
    }
    if ((flg & FLG_CONTENT_CHECKSUM) != 0) {
      need(at, 4, end);
      if (in.getInt(at) != xxhash.hash(dst, dstOff, written, 0)) {
        throw new IllegalArgumentException("LZ4 frame content checksum does not match");
      }
      at += 4;
    }
    if (written != length) {
      throw new IllegalArgumentException("LZ4 frame makes " + written + " bytes, its buffer declared " + length);
    }
    if (at != end) {
      throw new IllegalArgumentException((end - at) + " bytes follow the LZ4 frame's end");
    }
  }

  private static void need(int at, int bytes, int end) {
    if (bytes < 0 || at > end - bytes) {
      throw new IllegalArgumentException("LZ4 frame is truncated: " + bytes + " more bytes needed at offset " + at
          + ", " + Math.max(0, end - at) + " left");
    }
  }

  @Override
  public long maxDecompressedLength(long srcLen) {
    return Math.multiplyHigh(srcLen, MAX_RATIO) != 0 ? Long.MAX_VALUE : srcLen * MAX_RATIO + 64;
  }
}
