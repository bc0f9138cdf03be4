package io.thallus.internal.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.spi.Deadline;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class ReceivePoolTest {
  private static final Deadline SOON = Deadline.after(Duration.ofMillis(300));

  @Test
  void aReleasedBufferIsLentAgainAndIsPageAligned() {
    try (ReceivePool pool = new ReceivePool(8 << 20)) {
      ReceivePool.Lease first = pool.lend(100_000, SOON);
      long address = first.address();
      assertThat(address % ReceivePool.PAGE).isZero();
      assertThat(first.byteBuffer().capacity()).isEqualTo(100_000);
      first.release();
      first.release(); // a second release gives nothing back twice
      ReceivePool.Lease second = pool.lend(90_000, SOON);
      assertThat(second.address()).isEqualTo(address);
      second.release();
    }
  }

  @Test
  void aFullPoolWaitsThenSaysWhoHoldsTheMemory() {
    try (ReceivePool pool = new ReceivePool(2 << 20)) {
      ReceivePool.Lease held = pool.lend(2 << 20, SOON);
      assertThatThrownBy(() -> pool.lend(1 << 20, SOON))
          .isInstanceOfSatisfying(ThallusException.class, e -> {
            assertThat(e.code()).isEqualTo(StatusCode.RESOURCE_EXHAUSTED);
            assertThat(e.getMessage()).contains("1 received batches").contains("still held by the consumer");
          });
      assertThat(held.bytes()).isEqualTo(2 << 20);
      held.release();
      // Released: the idle 2 MiB region is freed to make room for a different size.
      pool.lend(1 << 20, SOON).release();
    }
  }

  @Test
  void aBodyLargerThanThePoolIsRefusedAtOnce() {
    try (ReceivePool pool = new ReceivePool(1 << 20)) {
      assertThatThrownBy(() -> pool.lend(3 << 20, SOON))
          .hasMessageContaining("larger than the receive pool's limit");
    }
  }

  @Test
  void buffersLentBeforeCloseAreFreedWhenReleased() {
    ReceivePool pool = new ReceivePool(4 << 20);
    ReceivePool.Lease held = pool.lend(70_000, SOON);
    pool.close();
    held.byteBuffer().putLong(0, 42);
    assertThat(held.byteBuffer().getLong(0)).isEqualTo(42);
    held.release();
    // A lease after close is refused: the pool is gone.
    assertThatThrownBy(() -> pool.lend(1, SOON)).hasMessageContaining("closed");
  }
}
