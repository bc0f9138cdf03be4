package io.thallus.internal.batch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.Random;
import net.jpountz.lz4.LZ4FrameInputStream;
import net.jpountz.lz4.LZ4FrameOutputStream;
import org.junit.jupiter.api.Test;

/** The codecs' bytes are the standard formats, and hostile bytes never make them write past their room. */
class BodyCodecsTest {
  private static byte[] sample(int length) {
    byte[] bytes = new byte[length];
    Random random = new Random(7);
    for (int i = 0; i < length; i++) {
      // Compressible, not trivially: small numbers with some noise.
      bytes[i] = (byte) (i % 13 == 0 ? random.nextInt() : i % 5);
    }
    return bytes;
  }

  private static byte[] compress(BufferCodec codec, byte[] input) {
    ByteBuffer out = ByteBuffer.allocateDirect(codec.maxCompressedLength(input.length));
    ByteBuffer in = ByteBuffer.allocateDirect(input.length).put(input).flip();
    int written = codec.compress(in, 0, input.length, out, 0, out.capacity());
    byte[] bytes = new byte[written];
    out.get(0, bytes);
    return bytes;
  }

  private static byte[] decompress(BufferCodec codec, byte[] frame, int length) {
    ByteBuffer in = ByteBuffer.allocateDirect(frame.length).put(frame).flip();
    // Guard bytes after the room: a codec that writes past it would change them.
    ByteBuffer out = ByteBuffer.allocateDirect(length + 16);
    for (int i = 0; i < 16; i++) {
      out.put(length + i, (byte) 0x77);
    }
    codec.decompress(in, 0, frame.length, out, 0, length);
    for (int i = 0; i < 16; i++) {
      assertThat(out.get(length + i)).as("guard byte " + i).isEqualTo((byte) 0x77);
    }
    byte[] bytes = new byte[length];
    out.get(0, bytes);
    return bytes;
  }

  @Test
  void ourLz4FramesAreStandardFramesBothWays() throws Exception {
    for (int length : new int[] {1, 100, 70_000, (4 << 20) + 1000}) {
      byte[] input = sample(length);
      byte[] ours = compress(Lz4FrameCodec.INSTANCE, input);
      try (LZ4FrameInputStream standard = new LZ4FrameInputStream(new ByteArrayInputStream(ours))) {
        assertThat(standard.readAllBytes()).as("lz4-java's frame reader on ours, %d bytes", length).isEqualTo(input);
      }
      ByteArrayOutputStream theirs = new ByteArrayOutputStream();
      try (LZ4FrameOutputStream standard = new LZ4FrameOutputStream(theirs)) {
        standard.write(input);
      }
      assertThat(decompress(Lz4FrameCodec.INSTANCE, theirs.toByteArray(), length)).isEqualTo(input);
    }
  }

  @Test
  void zstdRoundTripsAndReadsStandardFrames() {
    byte[] input = sample(300_000);
    assertThat(decompress(ZstdCodec.INSTANCE, compress(ZstdCodec.INSTANCE, input), input.length)).isEqualTo(input);
    assertThat(decompress(ZstdCodec.INSTANCE, com.github.luben.zstd.Zstd.compress(input, 3), input.length))
        .isEqualTo(input);
  }

  @Test
  void framesThatMakeMoreThanTheirRoomAreRefusedWithoutWritingPastIt() {
    byte[] input = sample(100_000);
    for (BufferCodec codec : new BufferCodec[] {Lz4FrameCodec.INSTANCE, ZstdCodec.INSTANCE}) {
      byte[] frame = compress(codec, input);
      assertThatThrownBy(() -> decompress(codec, frame, 50_000)).isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> decompress(codec, java.util.Arrays.copyOf(frame, frame.length / 2), input.length))
          .isInstanceOf(IllegalArgumentException.class);
      // Damaged bytes anywhere past the header: refused or (rarely) other bytes, never a write past the room.
      for (int at = 16; at < frame.length; at += Math.max(1, frame.length / 50)) {
        byte[] damaged = frame.clone();
        damaged[at] ^= (byte) 0xA5;
        try {
          decompress(codec, damaged, input.length);
        } catch (IllegalArgumentException expected) {
          // refused: fine
        }
      }
    }
  }
}
