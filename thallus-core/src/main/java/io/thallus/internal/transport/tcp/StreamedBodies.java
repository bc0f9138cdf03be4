package io.thallus.internal.transport.tcp;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.spi.BatchPart;
import io.thallus.spi.Deadline;
import io.thallus.spi.PackedBody;
import io.thallus.spi.PlacedBody;
import java.io.IOException;
import java.util.List;

/**
 * The sending end of a data connection, either way (results from the server, ingested batches from the client): each
 * body is written right after its frame, from the batch's own buffers in one gathering write. {@link BodyReader} is
 * the other end.
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
}
