package io.thallus.rdma.transport;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.rdma.push.PushReceiver;
import io.thallus.rdma.push.PushRing;
import io.thallus.rdma.verbs.ProtectionDomain;
import io.thallus.rdma.verbs.QueuePair;
import io.thallus.rdma.verbs.RegisteredBufferPool;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.BufferDescriptor;
import io.thallus.spi.Deadline;
import io.thallus.spi.FetchedBody;
import java.lang.foreign.MemorySegment;

/**
 * The server's side of rdma's ingest by RDMA WRITE: a ring of registered memory in the client's protection domain
 * that the client's pushes land in ({@link PushReceiver}), advertised in WELCOME. Each BATCH that names the ring's
 * key is matched with the next message pushed (the client pushes and announces in the same order), checked to be
 * exactly the bytes the frame names, copied into a buffer of the client's budget, and its room handed back at once,
 * so the client's credit never waits for the engine. Everything the client says is checked: a frame naming other
 * bytes than the message that came, a message at an offset where none may start or running past the ring's end
 * ({@link PushReceiver}), a body that never comes (the I/O deadline): each fails the batch naming what was wrong,
 * and a ring out of step fails every later pushed batch of the connection at once.
 */
final class IngestRing implements AutoCloseable {
  private final PushReceiver receiver;
  private final PushRing ring;
  private ThallusException outOfStep;

  private IngestRing(PushReceiver receiver) {
    this.receiver = receiver;
    this.ring = receiver.ring();
  }

  /** A ring of {@code bytes} taking up to {@code messages} at once, in the client's {@code domain}. */
  static IngestRing create(ProtectionDomain domain, int bytes, int messages) {
    return new IngestRing(PushReceiver.create(domain, bytes, messages));
  }

  QueuePair.Endpoint endpoint(QueuePair.ConnectOptions options) {
    return receiver.endpoint(options);
  }

  /** Lets the client's sending queue pair write into the ring (and nowhere else). */
  void connect(QueuePair.Endpoint sender, QueuePair.ConnectOptions options) {
    receiver.connect(sender, options);
  }

  PushRing ring() {
    return ring;
  }

  /** Whether a batch's body was pushed into the ring (it names the ring's key) rather than left for a READ. */
  boolean holds(BufferDescriptor extent) {
    return extent.key() == ring.remoteKey();
  }

  /** Takes the next pushed message as the body of {@code header}, whose bytes lie at {@code extent}. */
  synchronized FetchedBody take(BatchHeader header, BufferDescriptor extent, RegisteredBufferPool receive,
      Deadline deadline) {
    if (outOfStep != null) {
      throw ThallusException.of(outOfStep.code(), "the client's push ring failed earlier: "
          + outOfStep.getMessage(), outOfStep);
    }
    String batch = "ingested batch " + header.batchId() + " of stream " + header.streamId();
    long offset = extent.address() - ring.address();
    if (offset < 0 || offset >= ring.bytes() || extent.length() > ring.bytes() - offset) {
      throw outOfStep(ThallusException.of(StatusCode.PROTOCOL_ERROR, batch + " names " + extent.length()
          + " bytes at ring offset " + offset + ", outside the push ring of " + ring.bytes() + " bytes"));
    }
    PushReceiver.Message message;
    try {
      message = receiver.await(deadline);
    } catch (ThallusException e) {
      // A deadline leaves the ring in step no more: the message may come after the batch was given up.
      throw outOfStep(ThallusException.of(e.code(), "waiting for the pushed body of " + batch + ": "
          + e.getMessage(), e));
    }
    try {
      if (message.offset() != offset || message.length() < extent.length()) {
        throw outOfStep(ThallusException.of(StatusCode.PROTOCOL_ERROR, batch + " names " + extent.length()
            + " bytes at ring offset " + offset + ", but the message pushed for it is " + message.length()
            + " bytes at offset " + message.offset()));
      }
      RegisteredBufferPool.Buffer buffer = receive.tryBorrow(extent.length());
      if (buffer == null) {
        throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, "no memory left in the client's budget for "
            + batch + " (" + extent.length() + " bytes)");
      }
      MemorySegment.copy(message.bytes(), 0, buffer.memory(), 0, extent.length());
      return FetchedBody.mirrored(buffer.address(), extent.length(), extent.address(), false, buffer::close);
    } finally {
      // The room goes back whatever became of the batch: the ring stays in step with the frames.
      receiver.release(message);
    }
  }

  private ThallusException outOfStep(ThallusException e) {
    outOfStep = e;
    return e;
  }

  /** Closes the receiving queue pair first, so no write can land in the ring once its memory is freed. */
  @Override
  public synchronized void close() {
    receiver.close();
  }
}
