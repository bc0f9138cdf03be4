package io.thallus.exchange.internal;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The receive buffer one peer endpoint may fill with pushes (its connection's credits, in bytes): a push reserves
 * what it announces before a batch is sent, and the bytes come back when a reducer here takes them or the shuffle
 * is removed. A push that does not fit is refused up front, so its map output stays with its maker for a pull.
 */
public final class PushCredits {
  private final long limit;
  private final AtomicLong used = new AtomicLong();

  public PushCredits(long limit) {
    this.limit = limit;
  }

  /** Reserves {@code bytes} or fails with RESOURCE_EXHAUSTED saying what the buffer holds. */
  public void reserve(long bytes) {
    while (true) {
      long now = used.get();
      if (now + bytes > limit) {
        throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, "the push buffer for this peer holds " + now
            + " of its " + limit + " bytes; a push of " + bytes + " bytes does not fit (the map output stays with "
            + "its maker for a pull)");
      }
      if (used.compareAndSet(now, now + bytes)) {
        return;
      }
    }
  }

  /** Charges bytes past a reservation (a push whose batches took more than it announced). */
  public void charge(long bytes) {
    used.addAndGet(bytes);
  }

  public void release(long bytes) {
    used.addAndGet(-bytes);
  }

  public long used() {
    return used.get();
  }
}
