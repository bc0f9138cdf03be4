package io.thallus.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Waits for a condition with a deadline, never a fixed sleep: tests pass on a loaded machine, and fast on an idle one. */
public final class Eventually {
  private Eventually() {}

  /** Waits up to {@code atMost} for {@code condition}, checking every 10 ms, then asserts it holds. */
  public static void await(String what, Duration atMost, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + atMost.toNanos();
    while (!condition.getAsBoolean() && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertThat(condition.getAsBoolean()).as(what + " within " + atMost).isTrue();
  }
}
