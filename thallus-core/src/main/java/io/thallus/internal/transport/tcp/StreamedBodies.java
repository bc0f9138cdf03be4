package io.thallus.internal.transport.tcp;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.internal.batch.BatchLayouts;
import io.thallus.internal.transport.ReceivePool;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.BatchPart;
import io.thallus.spi.Deadline;
import io.thallus.spi.FetchedBody;
import io.thallus.spi.PackedBody;
import io.thallus.spi.PlacedBody;
import java.io.IOException;
import java.util.List;

/**
 * Bodies on a data connection, either way: the sender writes each body right after its frame, from the batch's own
 * buffers in one gathering write; the receiver reads it, in frame order, into a pooled buffer. The same for results
 * (server to client) and ingests (client to server).
 */
final class StreamedBodies {
  private StreamedBodies() {}

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
            io.writeFully(body.gatherList(), deadline, "the " + peer + " to read a batch body of " + body.length()
                + " bytes");
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

  /** Reads the body {@code header} announces from {@code io} into a buffer of {@code pool}. */
  static FetchedBody read(SocketIo io, ReceivePool pool, BatchHeader header, Deadline deadline) throws IOException {
    long bodyLength = BatchLayouts.bodyLength(header);
    ReceivePool.Lease body = pool.lend(bodyLength, deadline);
    try {
      io.readFully(body.byteBuffer(), deadline, "the body of batch " + header.batchId() + " of stream "
          + header.streamId());
    } catch (IOException | RuntimeException e) {
      body.release();
      throw e;
    }
    return FetchedBody.mirrored(body.address(), bodyLength, 0, false, body::release);
  }
}
