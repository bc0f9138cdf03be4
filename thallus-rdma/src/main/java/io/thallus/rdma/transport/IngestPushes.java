package io.thallus.rdma.transport;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.rdma.push.PushRing;
import io.thallus.rdma.push.PushSender;
import io.thallus.rdma.verbs.ProtectionDomain;
import io.thallus.rdma.verbs.QueuePair;
import io.thallus.rdma.verbs.RegisteredBufferPool;
import io.thallus.spi.BatchPart;
import io.thallus.spi.Deadline;
import io.thallus.spi.PackedBody;
import io.thallus.spi.PlacedBody;
import java.util.ArrayDeque;
import java.util.List;

/**
 * The client's side of rdma's ingest by RDMA WRITE ({@link IngestTransfer#WRITE}): each body is copied into a
 * registered buffer and pushed with one WRITE with immediate into the ring the server advertised in WELCOME, waiting
 * for the server's credit (within the I/O deadline) when the ring is full; the BATCH frame names the bytes in the
 * ring. The body has been handed over once the frame is out, so nothing is held for the server's release; the
 * source buffer goes back to its pool once the device has written it (its completion), not before, since the device
 * reads it until then. Placements come one at a time in announcing order (core places and announces under one lock),
 * so the ring's messages and the BATCH frames that name them come in the same order.
 */
final class IngestPushes implements AutoCloseable {
  /** Messages in flight at most; the server may allow fewer (its ring says how many). */
  static final int MESSAGES = 16;

  /** A source buffer whose write may still be reading it. */
  private record Unwritten(long ticket, RegisteredBufferPool.Buffer buffer) {}

  private final PushSender sender;
  private final ArrayDeque<Unwritten> unwritten = new ArrayDeque<>();
  private PushRing ring;
  private boolean closed;

  IngestPushes(ProtectionDomain domain) {
    this.sender = PushSender.create(domain, MESSAGES);
  }

  QueuePair.Endpoint endpoint(QueuePair.ConnectOptions options) {
    return sender.endpoint(options);
  }

  /** Connects to the server's receiving queue pair and takes its ring, from WELCOME. */
  synchronized void connect(QueuePair.Endpoint receiver, QueuePair.ConnectOptions options, PushRing advertised) {
    sender.connect(receiver, options, advertised);
    this.ring = advertised;
  }

  /** The ring's bytes; 0 where the server offered none. */
  synchronized long ringBytes() {
    return ring == null ? 0 : ring.bytes();
  }

  /**
   * Whether a body placed for the server's READ under {@code remoteKey} would look like a message in the ring to the
   * server (which tells the two apart by the ring's key): keys of two devices may coincide across hosts.
   */
  synchronized boolean isRingKey(int remoteKey) {
    return ring != null && ring.remoteKey() == remoteKey;
  }

  /**
   * Pushes {@code body} into the server's ring through a buffer of {@code sources}; null while {@code sources} has
   * no buffer free and no write is left to wait for (core waits for releases then, as for READ).
   */
  synchronized PlacedBody place(PackedBody body, RegisteredBufferPool sources, Deadline deadline) {
    if (closed) {
      throw ThallusException.of(StatusCode.CANCELLED, "the rdma session is closed");
    }
    if (ring == null) {
      throw ThallusException.of(StatusCode.FAILED_PRECONDITION, "ingest by RDMA WRITE (" + IngestTransfer.PROPERTY
          + "=write): the server offered no push ring");
    }
    if (body.length() > ring.bytes()) {
      throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, "an ingested body of " + body.length()
          + " bytes does not fit the server's push ring of " + ring.bytes() + " bytes (" + IngestTransfer.PROPERTY
          + "=write): send smaller batches, or use by-size, which reads larger bodies");
    }
    int length = (int) body.length();
    freeWritten();
    RegisteredBufferPool.Buffer buffer = sources.tryBorrow(Math.max(length, 8));
    if (buffer == null && !unwritten.isEmpty()) {
      sender.awaitWritten(unwritten.peekLast().ticket(), deadline);
      freeWritten();
      buffer = sources.tryBorrow(Math.max(length, 8));
    }
    if (buffer == null) {
      return null;
    }
    long ticket;
    int offset;
    try {
      body.copyTo(buffer.address());
      ticket = sender.push(buffer.address(), buffer.localKey(), length, deadline);
      offset = sender.lastOffset();
    } catch (RuntimeException e) {
      // Nothing was posted (push waits for credit before it posts), or the queue pair failed: nothing reads it.
      buffer.close();
      throw e;
    }
    List<BatchPart> parts = body.relocated(ring.address() + offset, ring.remoteKey());
    Unwritten source = new Unwritten(ticket, buffer);
    return new PlacedBody() {
      @Override
      public List<BatchPart> parts() {
        return parts;
      }

      @Override
      public boolean heldUntilReleased() {
        return false;
      }

      @Override
      public void close() {
        keepUntilWritten(source);
      }
    };
  }

  private synchronized void keepUntilWritten(Unwritten source) {
    if (closed) {
      source.buffer().close();
    } else {
      unwritten.add(source);
    }
  }

  /** Gives back every source buffer whose write is done (writes complete in posting order). */
  private void freeWritten() {
    while (!unwritten.isEmpty() && sender.isWritten(unwritten.peek().ticket())) {
      unwritten.poll().buffer().close();
    }
  }

  /** Called when the session ends: the queue pair goes first, so the device reads no source buffer given back. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    sender.close();
    unwritten.forEach(source -> source.buffer().close());
    unwritten.clear();
  }
}
