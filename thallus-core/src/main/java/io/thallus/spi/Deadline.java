package io.thallus.spi;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.time.Duration;

/** A point in time after which a wait gives up. Every blocking wait in Thallus takes one. */
public final class Deadline {
  private final long deadlineNanos;
  private final Duration budget;

  private Deadline(Duration budget) {
    this.budget = budget;
    this.deadlineNanos = System.nanoTime() + Math.min(budget.toNanos(), Long.MAX_VALUE / 4);
  }

  public static Deadline after(Duration budget) {
    if (budget.isNegative()) {
      throw new IllegalArgumentException("negative deadline budget " + budget);
    }
    return new Deadline(budget);
  }

  public long remainingNanos() {
    return Math.max(0, deadlineNanos - System.nanoTime());
  }

  public long remainingMillis() {
    long nanos = remainingNanos();
    return nanos == 0 ? 0 : Math.max(1, nanos / 1_000_000);
  }

  public boolean isExpired() {
    return remainingNanos() == 0;
  }

  /** The DEADLINE_EXCEEDED error for a wait on {@code waitingFor} that ran out. */
  public ThallusException expired(String waitingFor) {
    return ThallusException.of(StatusCode.DEADLINE_EXCEEDED,
        "gave up after " + budget.toMillis() + " ms waiting for " + waitingFor);
  }
}
