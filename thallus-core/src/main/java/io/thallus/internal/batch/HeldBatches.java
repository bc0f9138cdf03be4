package io.thallus.internal.batch;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.spi.Deadline;
import io.thallus.spi.PackedBody;
import io.thallus.spi.PlacedBody;
import io.thallus.spi.BodyPlacer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The one ledger of the batches a peer may still read from their sender, for every transport and both directions: a
 * placed body is held from its BATCH frame until the peer releases it (NEXT) or the connection ends, and what one
 * peer holds stays within its memory budget. A placement that does not fit waits here for the peer's releases, up to
 * its deadline.
 */
public final class HeldBatches implements AutoCloseable {
  private record Key(int streamId, long batchId) {}

  private record Held(PlacedBody placed, long bytes) {}

  private final BodyPlacer session;
  private final long budget;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition released = lock.newCondition();
  private final Map<Key, Held> held = new HashMap<>();
  private long heldBytes;
  /** Counts releases, so a placement that found no room waits for the next one, not for one that came meanwhile. */
  private long releases;
  private boolean closed;

  public HeldBatches(BodyPlacer session, long budget) {
    this.session = session;
    this.budget = budget;
  }

  /**
   * Has the session place {@code body} and, if the client will read it from the server, holds it under
   * {@code (streamId, batchId)}. Waits for releases while the client's held bytes leave no room, or the transport
   * has none.
   */
  public PlacedBody place(int streamId, long batchId, PackedBody body, Deadline deadline) {
    long bytes = body.length();
    while (true) {
      long seen;
      lock.lock();
      try {
        while (!closed && !held.isEmpty() && heldBytes + bytes > budget) {
          awaitRelease(deadline);
        }
        throwIfClosed();
        seen = releases;
      } finally {
        lock.unlock();
      }
      // Outside the lock: placing copies or registers memory, and releases (on the event loop) must not wait for it.
      PlacedBody placed = session.place(body, deadline);
      lock.lock();
      try {
        if (placed != null) {
          if (closed) {
            placed.close();
            throwIfClosed();
          }
          if (placed.heldUntilReleased()) {
            Held previous = held.put(new Key(streamId, batchId), new Held(placed, bytes));
            heldBytes += bytes;
            if (previous != null) {
              // Only a client that reused a stream id still holding batches gets here: its old place is freed
              // rather than lost, so nothing outlives the connection unaccounted.
              heldBytes -= previous.bytes();
              previous.placed().close();
            }
          }
          return placed;
        }
        if (held.isEmpty() && releases == seen) {
          throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, "a batch body of " + bytes
              + " bytes does not fit in the memory the transport may use for one client (memoryPerClient, "
              + budget + " bytes); ask for smaller batches");
        }
        while (releases == seen) {
          throwIfClosed();
          awaitRelease(deadline);
        }
      } finally {
        lock.unlock();
      }
    }
  }

  private void throwIfClosed() {
    if (closed) {
      throw ThallusException.of(StatusCode.UNAVAILABLE, "the client's connection is closed");
    }
  }

  /** Waits (holding the lock) for the next release, or fails once the deadline has passed. */
  private void awaitRelease(Deadline deadline) {
    long left = deadline.remainingNanos();
    if (left == 0) {
      throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, "the client holds " + held.size()
          + " batches (" + heldBytes + " bytes) it has not released, and the limit per client is " + budget
          + " bytes: close batches after use, or raise memoryPerClient");
    }
    try {
      released.awaitNanos(Math.min(left, TimeUnit.MILLISECONDS.toNanos(200)));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw ThallusException.of(StatusCode.CANCELLED, "interrupted while waiting for the client's releases");
    }
  }

  /** The client is done with a batch: its place is freed. An id the ledger does not hold is ignored. */
  public void release(int streamId, long batchId) {
    Held batch;
    lock.lock();
    try {
      batch = held.remove(new Key(streamId, batchId));
    } finally {
      lock.unlock();
    }
    if (batch == null) {
      return;
    }
    // Freed before it is counted: a placement woken by the count must find the room.
    batch.placed().close();
    lock.lock();
    try {
      heldBytes -= batch.bytes();
      releases++;
      released.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /** The connection is over: every place is freed, and a placement still waiting fails. Idempotent. */
  @Override
  public void close() {
    List<Held> toFree;
    lock.lock();
    try {
      closed = true;
      toFree = new ArrayList<>(held.values());
      held.clear();
      heldBytes = 0;
      released.signalAll();
    } finally {
      lock.unlock();
    }
    toFree.forEach(batch -> batch.placed().close());
  }
}
