package io.thallus.internal.transport.tcp;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.spi.BatchPart;
import io.thallus.spi.Deadline;
import io.thallus.spi.PackedBody;
import io.thallus.spi.PlacedBody;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;

/**
 * The sending end of a data connection, either way (results from the server, ingested batches from the client): each
 * body is written right after its frame, from the batch's own buffers in one gathering write. {@link BodyReader} is
 * the other end.
 */
final class StreamedBodies {
  /** The most a body's copy takes at once where Arrow's memory cannot be written from directly. */
  private static final int PIECE = 256 * 1024;

  private StreamedBodies() {}

  /**
   * The body's buffers in one gathering write where Arrow has ByteBuffer views of its memory; else (a JVM started
   * without java.nio opened, see {@link PackedBody#gatherList}) copied in pieces through one heap buffer.
   */
  private static void write(SocketIo io, PackedBody body, Deadline deadline, String what) throws IOException {
    ByteBuffer[] gathered = body.gatherList();
    if (gathered != null) {
      io.writeFully(gathered, deadline, what);
      return;
    }
    // A heap buffer: Arrow copies into a direct one by its address, which such a JVM does not give Arrow either.
    ByteBuffer piece = ByteBuffer.allocate((int) Math.min(PIECE, Math.max(1, body.length())));
    long position = 0;
    for (int i = 0; i <= body.buffers().size(); i++) {
      long start = i < body.buffers().size() ? body.offset(i) : body.length();
      // The padding before buffer i (or after the last one), as zeros.
      for (; position < start; position++) {
        if (!piece.hasRemaining()) {
          flush(io, piece, deadline, what);
        }
        piece.put((byte) 0);
      }
      if (i == body.buffers().size()) {
        break;
      }
      ArrowBuf buffer = body.buffers().get(i);
      long length = buffer.readableBytes();
      for (long done = 0; done < length; ) {
        if (!piece.hasRemaining()) {
          flush(io, piece, deadline, what);
        }
        int n = (int) Math.min(length - done, piece.remaining());
        buffer.getBytes(done, piece.slice(piece.position(), n));
        piece.position(piece.position() + n);
        done += n;
      }
      position += length;
    }
    flush(io, piece, deadline, what);
  }

  private static void flush(SocketIo io, ByteBuffer piece, Deadline deadline, String what) throws IOException {
    piece.flip();
    if (piece.hasRemaining()) {
      io.writeFully(new ByteBuffer[] {piece}, deadline, what);
    }
    piece.clear();
  }

  /**
   * A placement whose body follows its frame on {@code io}; {@code broken} runs (and the connection closes) when a
   * write fails part way, since nothing can follow a body cut short.
   */
  static PlacedBody place(SocketIo io, Object writeLock, PackedBody body, String peer, Runnable broken) {
    return new PlacedBody() {
      @Override
      public List<BatchPart> parts() {
        return body.parts();
      }

      @Override
      public void afterAnnounced(Deadline deadline) {
        synchronized (writeLock) {
          try {
            write(io, body, deadline, "the " + peer + " to read a batch body of " + body.length() + " bytes");
          } catch (IOException | RuntimeException e) {
            broken.run();
            io.close();
            throw e instanceof ThallusException t ? t : ThallusException.of(StatusCode.UNAVAILABLE,
                "writing a batch body to the " + peer + " failed: " + e.getMessage(), e);
          }
        }
      }

      @Override
      public boolean heldUntilReleased() {
        return false;
      }

      @Override
      public void close() {}
    };
  }
}
