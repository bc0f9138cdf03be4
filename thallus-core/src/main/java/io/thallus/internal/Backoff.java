package io.thallus.internal;

import java.time.Duration;

/**
 * How long to wait before trying again after a failure: {@code first}, doubling with each failure in a row up to
 * {@code max}, and {@code first} again after a success. For loops whose call fails again at once when retried (an
 * accept without a free file descriptor): they neither spin nor give up. One thread's; not thread-safe.
 */
public final class Backoff {
  private final long firstNanos;
  private final long maxNanos;
  private long nextNanos;

  public Backoff(Duration first, Duration max) {
    if (first.isNegative() || first.isZero() || max.compareTo(first) < 0) {
      throw new IllegalArgumentException("back-off from " + first + " to " + max);
    }
    this.firstNanos = first.toNanos();
    this.maxNanos = max.toNanos();
    this.nextNanos = firstNanos;
  }

  /** The pause to take after a failure; the one after the next failure is twice as long, up to the maximum. */
  public Duration failed() {
    long pause = nextNanos;
    nextNanos = Math.min(maxNanos, nextNanos * 2);
    return Duration.ofNanos(pause);
  }

  /** After a success the next failure pauses for the first, shortest time again. */
  public void succeeded() {
    nextNanos = firstNanos;
  }
}
