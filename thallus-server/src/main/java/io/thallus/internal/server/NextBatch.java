package io.thallus.internal.server;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.engine.QueryResult;
import io.thallus.spi.BatchContents;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A stream's next batch, being made on a producer thread borrowed from the {@link ProducerPool} while the stream
 * sends the batch before it. At most one is being made per stream; only the stream's steps touch this (they never
 * overlap).
 */
final class NextBatch {
  private static final Logger LOG = LoggerFactory.getLogger(NextBatch.class);
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
  /** How often a stream waiting for its batch looks for an abort. */
  private static final long ABORT_CHECK_MILLIS = 20;

  /** A batch a producer made (null: the result has ended), and the CPU time it took there. */
  private record Made(BatchContents batch, long cpuNanos) {}

  private CompletableFuture<Made> making;
  private long producerCpuNanos;

  /** Whether a batch is being made (or made and not yet taken). */
  boolean isMaking() {
    return making != null;
  }

  /** Starts making {@code result}'s next batch on a producer thread, if the pool lends one now. */
  boolean start(ProducerPool producers, QueryResult result) {
    making = producers.tryLend(() -> {
      long start = THREADS.getCurrentThreadCpuTime();
      BatchContents batch = result.next();
      return new Made(batch, THREADS.getCurrentThreadCpuTime() - start);
    });
    return making != null;
  }

  /**
   * The batch being made (null at the end of the result), once made; its failure, as the engine threw it. The wait
   * has the bounds of a batch the stream makes itself: the engine's, stopped by the query's timeout or any abort,
   * which {@code throwIfAborted} throws (the batch is then left to {@link #stop}).
   */
  BatchContents take(Runnable throwIfAborted) {
    CompletableFuture<Made> pending = making;
    while (true) {
      throwIfAborted.run();
      try {
        Made made = pending.get(ABORT_CHECK_MILLIS, TimeUnit.MILLISECONDS);
        making = null;
        producerCpuNanos += made.cpuNanos();
        return made.batch();
      } catch (TimeoutException stillMaking) {
        // Look for an abort again.
      } catch (ExecutionException e) {
        making = null;
        switch (e.getCause()) {
          case RuntimeException runtime -> throw runtime;
          case Error error -> throw error;
          case Throwable other -> throw ThallusException.of(StatusCode.INTERNAL, "making a batch failed: " + other,
              other);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw ThallusException.of(StatusCode.CANCELLED, "stream thread interrupted");
      }
    }
  }

  /**
   * The stream is over: a batch still being made is stopped (the engine is asked to cancel) and waited for, up to
   * {@code wait}, before {@code result} may close under it; a batch made and not taken is freed. True when nothing
   * runs in the engine any more (the caller runs {@code closeResult}); false when the producer did not return in
   * time, in which case its batch is freed and {@code closeResult} runs when it does, on the producer's thread.
   */
  boolean stop(QueryResult result, Duration wait, int streamId, Runnable closeResult) {
    CompletableFuture<Made> pending = making;
    making = null;
    if (pending == null) {
      return true;
    }
    if (!pending.isDone()) {
      result.cancel();
    }
    try {
      free(pending.get(wait.toMillis(), TimeUnit.MILLISECONDS));
      return true;
    } catch (ExecutionException failed) {
      // The stream is over for another reason; the production's own failure adds nothing.
      return true;
    } catch (TimeoutException | InterruptedException e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      LOG.warn("stream {}: the engine did not stop making a batch within {} s of being asked; its result closes when "
          + "it does", streamId, wait.toSeconds());
      pending.whenComplete((made, error) -> {
        try {
          if (made != null) {
            free(made);
          }
        } finally {
          closeResult.run();
        }
      });
      return false;
    }
  }

  /** The CPU time producer threads spent on this stream's batches, so far. */
  long producerCpuNanos() {
    return producerCpuNanos;
  }

  private static void free(Made made) {
    if (made.batch() != null) {
      made.batch().close();
    }
  }
}
