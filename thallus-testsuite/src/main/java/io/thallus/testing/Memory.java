package io.thallus.testing;

import static org.assertj.core.api.Assertions.assertThat;

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
}
