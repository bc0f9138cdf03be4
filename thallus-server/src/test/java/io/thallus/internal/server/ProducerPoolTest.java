package io.thallus.internal.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.server.Overlap;
import io.thallus.spi.Deadline;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The rule that lends producer threads: by the machine's cores and the work already on them, or always when forced. */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class ProducerPoolTest {
  /** Lends producers to tasks that wait on {@code release} until one is refused; returns how many were lent. */
  private static int lendUntilRefused(ProducerPool pool, CountDownLatch release, List<CompletableFuture<String>> lent) {
    while (true) {
      CompletableFuture<String> made = pool.tryLend(() -> {
        try {
          release.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        return Thread.currentThread().getName();
      });
      if (made == null) {
        return lent.size();
      }
      lent.add(made);
    }
  }

  @Test
  void autoOnTwoCoresNeverLends() {
    ProducerPool pool = ProducerPool.of(Overlap.auto(), 2, 1, () -> 1);
    assertThat(pool.lends()).isFalse();
    assertThat(pool.tryLend(() -> "made")).isNull();
    assertThat(pool.toString()).isEqualTo("auto: off on 2 cores");
    // Three cores leave one for streams: a stream at work takes it, nothing is left to lend.
    assertThat(ProducerPool.of(Overlap.auto(), 3, 1, () -> 1).lends()).isFalse();
  }

  @Test
  void autoLendsWhileTheBusyEngineThreadsAndProducersLeaveACore() throws Exception {
    AtomicInteger busy = new AtomicInteger(8);
    // Sixteen cores, one event loop, one core for the engine's own workers: fourteen for streams and producers.
    ProducerPool pool = ProducerPool.of(Overlap.auto(), 16, 1, busy::get);
    assertThat(pool.toString()).isEqualTo("auto: up to 13 producers on 16 cores");
    CountDownLatch release = new CountDownLatch(1);
    List<CompletableFuture<String>> lent = new ArrayList<>();
    try {
      assertThat(lendUntilRefused(pool, release, lent)).as("eight streams at work").isEqualTo(6);
      busy.set(1);
      assertThat(lendUntilRefused(pool, release, lent)).as("then one stream at work").isEqualTo(13);
    } finally {
      release.countDown();
    }
    for (CompletableFuture<String> made : lent) {
      assertThat(made.get(30, TimeUnit.SECONDS)).startsWith("thallus-server-produce-");
    }
    // Every producer came back once its batch was made: all thirteen may be lent again.
    busy.set(0);
    CountDownLatch again = new CountDownLatch(1);
    List<CompletableFuture<String>> relent = new ArrayList<>();
    try {
      assertThat(lendUntilRefused(pool, again, relent)).isEqualTo(13);
    } finally {
      again.countDown();
    }
    pool.close(Deadline.after(Duration.ofSeconds(30)));
  }

  @Test
  void forcedLendsUpToItsThreadsWhateverTheMachine() throws Exception {
    ProducerPool pool = ProducerPool.of(Overlap.producers(3), 2, 1, () -> 64);
    CountDownLatch release = new CountDownLatch(1);
    List<CompletableFuture<String>> lent = new ArrayList<>();
    try {
      assertThat(lendUntilRefused(pool, release, lent)).isEqualTo(3);
    } finally {
      release.countDown();
    }
    for (CompletableFuture<String> made : lent) {
      made.get(30, TimeUnit.SECONDS);
    }
    // A failure reaches the borrower, and the producer comes back all the same.
    CompletableFuture<String> failed = pool.tryLend(() -> {
      throw new IllegalStateException("engine failed");
    });
    assertThat(failed).failsWithin(Duration.ofSeconds(30)).withThrowableThat()
        .havingCause().isInstanceOf(IllegalStateException.class).withMessage("engine failed");
    assertThat(pool.tryLend(() -> "made").get(30, TimeUnit.SECONDS)).isEqualTo("made");
    pool.close(Deadline.after(Duration.ofSeconds(30)));
    assertThat(pool.tryLend(() -> "made")).as("closed: the caller makes the batch itself").isNull();
  }

  @Test
  void offNeverLends() {
    ProducerPool pool = ProducerPool.of(Overlap.off(), 64, 1, () -> 0);
    assertThat(pool.lends()).isFalse();
    assertThat(pool.tryLend(() -> "made")).isNull();
    assertThatThrownBy(() -> Overlap.producers(0)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("Overlap.off()");
  }

  @Test
  void theEngineThreadsCountThoseAtWorkWithoutTheExecutorsLock() throws Exception {
    EngineThreadPool engineThreads = new EngineThreadPool(4);
    ProducerPool pool = ProducerPool.of(Overlap.auto(), 5, 1, engineThreads::busy);
    assertThat(pool.toString()).isEqualTo("auto: up to 2 producers on 5 cores");
    CountDownLatch working = new CountDownLatch(3);
    CountDownLatch release = new CountDownLatch(1);
    try {
      for (int i = 0; i < 3; i++) {
        engineThreads.execute(() -> {
          working.countDown();
          try {
            release.await(30, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
      }
      assertThat(working.await(30, TimeUnit.SECONDS)).isTrue();
      assertThat(engineThreads.busy()).isEqualTo(3);
      // Three streams at work on the three cores left beside the event loop and DuckDB's workers: none to lend.
      assertThat(pool.tryLend(() -> "made")).isNull();
    } finally {
      release.countDown();
    }
    engineThreads.shutdown();
    assertThat(engineThreads.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    assertThat(engineThreads.busy()).isZero();
    // Idle again: a producer is lent.
    assertThat(pool.tryLend(() -> "made").get(30, TimeUnit.SECONDS)).isEqualTo("made");
    pool.close(Deadline.after(Duration.ofSeconds(30)));
  }

  @Test
  void autoCountsTheEnginesOwnWorkersByItsThreads() throws Exception {
    // DuckDB's default (a thread per core): a core is left to its workers, as when the engine does not say.
    assertThat(ProducerPool.of(Overlap.auto(), 16, 1, java.util.OptionalInt.of(16), () -> 0).toString())
        .isEqualTo("auto: up to 13 producers on 16 cores, engine threads 16");
    assertThat(ProducerPool.of(Overlap.auto(), 16, 1, java.util.OptionalInt.of(4), () -> 0).toString())
        .isEqualTo("auto: up to 13 producers on 16 cores, engine threads 4");
    // One thread: DuckDB has no workers of its own (the stream's thread does its work), so their core is shared.
    ProducerPool single = ProducerPool.of(Overlap.auto(), 16, 1, java.util.OptionalInt.of(1), () -> 0);
    assertThat(single.toString()).isEqualTo("auto: up to 14 producers on 16 cores, engine threads 1");
    CountDownLatch release = new CountDownLatch(1);
    List<CompletableFuture<String>> lent = new ArrayList<>();
    try {
      assertThat(lendUntilRefused(single, release, lent)).isEqualTo(14);
    } finally {
      release.countDown();
    }
    for (CompletableFuture<String> made : lent) {
      made.get(30, TimeUnit.SECONDS);
    }
    single.close(Deadline.after(Duration.ofSeconds(30)));
    // Three cores and one engine thread: a stream at work and a producer beside it.
    assertThat(ProducerPool.of(Overlap.auto(), 3, 1, java.util.OptionalInt.of(1), () -> 1).lends()).isTrue();
    // Two cores stay off whatever the engine's threads: one stream at work takes the core left.
    assertThat(ProducerPool.of(Overlap.auto(), 2, 1, java.util.OptionalInt.of(1), () -> 1).lends()).isFalse();
    assertThat(ProducerPool.of(Overlap.auto(), 2, 1, java.util.OptionalInt.of(2), () -> 1).lends()).isFalse();
  }
}
