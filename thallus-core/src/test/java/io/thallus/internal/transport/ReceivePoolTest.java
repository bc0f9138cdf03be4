package io.thallus.internal.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.spi.Deadline;
import java.time.Duration;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;

class ReceivePoolTest {
  private static final Deadline SOON = Deadline.after(Duration.ofMillis(300));

  @Test
  void aReleasedBufferIsLentAgainAndIsPageAligned() {
    try (BufferAllocator allocator = new RootAllocator(); ReceivePool pool = new ReceivePool(8 << 20)) {
      long address;
      try (ArrowBuf first = pool.borrow(100_000, allocator, SOON)) {
        address = first.memoryAddress();
        assertThat(address % ReceivePool.PAGE).isZero();
        assertThat(first.capacity()).isEqualTo(100_000);
        assertThat(allocator.getAllocatedMemory()).isEqualTo(100_000);
      }
      assertThat(allocator.getAllocatedMemory()).isZero();
      try (ArrowBuf second = pool.borrow(90_000, allocator, SOON)) {
        assertThat(second.memoryAddress()).isEqualTo(address);
      }
    }
  }

  @Test
  void aFullPoolWaitsThenSaysWhoHoldsTheMemory() {
    try (BufferAllocator allocator = new RootAllocator(); ReceivePool pool = new ReceivePool(2 << 20)) {
      try (ArrowBuf held = pool.borrow(2 << 20, allocator, SOON)) {
        assertThatThrownBy(() -> pool.borrow(1 << 20, allocator, SOON))
            .isInstanceOfSatisfying(ThallusException.class, e -> {
              assertThat(e.code()).isEqualTo(StatusCode.RESOURCE_EXHAUSTED);
              assertThat(e.getMessage()).contains("1 received batches").contains("still held by the consumer");
            });
        assertThat(held.capacity()).isEqualTo(2 << 20);
      }
      // Released: the idle 2 MiB region is freed to make room for a different size.
      pool.borrow(1 << 20, allocator, SOON).close();
    }
  }

  @Test
  void aBodyLargerThanThePoolIsRefusedAtOnce() {
    try (BufferAllocator allocator = new RootAllocator(); ReceivePool pool = new ReceivePool(1 << 20)) {
      assertThatThrownBy(() -> pool.borrow(3 << 20, allocator, SOON))
          .hasMessageContaining("larger than the receive pool's limit");
    }
  }

  @Test
  void buffersLentBeforeCloseAreFreedWhenReleased() {
    try (BufferAllocator allocator = new RootAllocator()) {
      ReceivePool pool = new ReceivePool(4 << 20);
      ArrowBuf held = pool.borrow(70_000, allocator, SOON);
      pool.close();
      held.setLong(0, 42);
      assertThat(held.getLong(0)).isEqualTo(42);
      held.close();
      assertThat(allocator.getAllocatedMemory()).isZero();
    }
  }
}
