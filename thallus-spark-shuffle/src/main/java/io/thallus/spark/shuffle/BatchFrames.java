package io.thallus.spark.shuffle;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.Channels;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.ReadChannel;
import org.apache.arrow.vector.ipc.WriteChannel;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.ipc.message.MessageSerializer;

/**
 * The shuffle's framing: a map task's output for one reduce partition is a run of frames, one Arrow record batch
 * each, so that runs of several map tasks or partitions concatenate (Spark's batch fetch joins contiguous blocks).
 *
 * <pre>
 * +----------+---------------+------------------+---------------------------------------+
 * | codec: 1 | raw length: 4 | stored length: 4 | stored bytes (stored length)          |
 * +----------+---------------+------------------+---------------------------------------+
 *   raw bytes = one Arrow IPC record batch message (metadata and body); the schema travels in the plan, not here
 * </pre>
 *
 * Lengths are big-endian; a raw length over {@link #MAX_RAW_LENGTH} is refused as corrupt.
 */
final class BatchFrames {
  static final int HEADER_LENGTH = 9;
  static final int MAX_RAW_LENGTH = 1 << 30;

  private BatchFrames() {}

  /** Encodes record batches into frames; one per map task (it keeps its scratch arrays between batches). */
  static final class Encoder {
    private final FrameCodec codec;
    private final GrowableBytes raw = new GrowableBytes(1 << 16);

    Encoder(FrameCodec codec) {
      this.codec = codec;
    }

    /** Appends {@code root}'s rows as one frame to {@code out} and returns the raw (uncompressed) length. */
    int encode(VectorSchemaRoot root, GrowableBytes out) throws IOException {
      raw.reset();
      try (ArrowRecordBatch batch = new VectorUnloader(root).getRecordBatch()) {
        // A fresh channel per batch: the channel pads to 8 bytes by its own position, which starts at 0 here.
        MessageSerializer.serialize(new WriteChannel(Channels.newChannel(raw)), batch);
      }
      int rawLength = raw.size();
      if (rawLength > MAX_RAW_LENGTH) {
        // The reader would refuse it as corrupt: say so here, where the cause is known.
        throw new IOException("A shuffle batch of " + root.getRowCount() + " rows is " + rawLength
            + " bytes, over a frame's " + MAX_RAW_LENGTH + "; lower " + ShuffleOptions.BATCH_ROWS);
      }
      out.ensure(HEADER_LENGTH + codec.maxCompressedLength(rawLength));
      int start = out.size();
      out.advance(HEADER_LENGTH);
      int stored = codec.compress(raw.array(), rawLength, out.array(), out.size());
      byte[] header = out.array();
      header[start] = codec.id;
      putInt(header, start + 1, rawLength);
      putInt(header, start + 5, stored);
      out.advance(stored);
      return rawLength;
    }
  }

  /** Reads frames from a stream into record batches; one per reduce task. */
  static final class Decoder {
    private final BufferAllocator allocator;
    private byte[] stored = new byte[0];
    private byte[] raw = new byte[0];

    Decoder(BufferAllocator allocator) {
      this.allocator = allocator;
    }

    /** The next frame's record batch (the caller closes it), or null at the end of {@code in}. */
    ArrowRecordBatch next(DataInputStream in) throws IOException {
      int codecId = in.read();
      if (codecId < 0) {
        return null;
      }
      FrameCodec codec = FrameCodec.ofId((byte) codecId);
      int rawLength = in.readInt();
      int storedLength = in.readInt();
      if (rawLength < 0 || rawLength > MAX_RAW_LENGTH || storedLength < 0
          || storedLength > codec.maxCompressedLength(rawLength)) {
        throw new IOException("Corrupt shuffle frame: raw length " + rawLength + ", stored " + storedLength);
      }
      if (stored.length < storedLength) {
        stored = new byte[storedLength];
      }
      in.readFully(stored, 0, storedLength);
      byte[] message;
      if (codec == FrameCodec.NONE) {
        message = stored;
      } else {
        if (raw.length < rawLength) {
          raw = new byte[rawLength];
        }
        codec.decompress(stored, storedLength, raw, rawLength);
        message = raw;
      }
      ReadChannel channel = new ReadChannel(Channels.newChannel(new ByteArrayInputStream(message, 0, rawLength)));
      ArrowRecordBatch batch = MessageSerializer.deserializeRecordBatch(channel, allocator);
      if (batch == null) {
        throw new EOFException("Corrupt shuffle frame: no record batch in " + rawLength + " bytes");
      }
      return batch;
    }

    static DataInputStream buffered(InputStream in) {
      return new DataInputStream(in instanceof java.io.BufferedInputStream ? in
          : new java.io.BufferedInputStream(in, 1 << 16));
    }
  }

  private static void putInt(byte[] bytes, int at, int value) {
    bytes[at] = (byte) (value >>> 24);
    bytes[at + 1] = (byte) (value >>> 16);
    bytes[at + 2] = (byte) (value >>> 8);
    bytes[at + 3] = (byte) value;
  }
}
