package io.thallus.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/** Memory checks for tests: what a server or client holds must come back to zero, soon. */
public final class Memory {
  private Memory() {}

  /** Waits up to 20 s for {@code bytes} to reach zero (release is asynchronous), then asserts it did. */
  public static void awaitZero(LongSupplier bytes, String what) throws InterruptedException {
    awaitAtMost(bytes, 0, what);
  }

  /** Waits up to 20 s for {@code bytes} to come down to {@code limit}, then asserts it did. */
  public static void awaitAtMost(LongSupplier bytes, long limit, String what) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (bytes.getAsLong() > limit && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertThat(bytes.getAsLong()).as(what).isLessThanOrEqualTo(limit);
  }

  /**
   * Waits up to 20 s for {@code bytes} to stop changing (the same figure throughout {@code quiet}), as it does once a
   * producer held back by credits or a budget has used them all, and returns that figure; fails if it kept changing.
   * On a loaded machine a pause longer than {@code quiet} may end the wait early: assert a bound on the figure, never
   * that it is final.
   */
  public static long awaitSteady(LongSupplier bytes, Duration quiet, String what) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    long steady = bytes.getAsLong();
    long since = System.nanoTime();
    while (System.nanoTime() - since < quiet.toNanos()) {
      assertThat(System.nanoTime()).as("%s kept changing for 20 s, last at %d", what, steady).isLessThan(deadline);
      Thread.sleep(10);
      long now = bytes.getAsLong();
      if (now != steady) {
        steady = now;
        since = System.nanoTime();
      }
    }
    return steady;
  }
}
