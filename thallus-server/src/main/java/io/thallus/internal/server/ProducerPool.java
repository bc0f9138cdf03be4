package io.thallus.internal.server;

import io.thallus.server.Overlap;
import io.thallus.spi.Deadline;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

/**
 * The producer threads that result streams borrow to make their next batch while they send the last one
 * ({@link Overlap}), and the rule that lends them.
 *
 * <p>With {@link Overlap#auto()} the rule counts cores: the machine's, less one per event loop and one for the
 * engine's own workers (DuckDB scans ahead of its streams on threads of its own) and what else the JVM runs, leaves
 * the cores that streams and producers share. An engine that runs a query on one thread only (DuckDB with
 * {@code threads = 1}: no workers of its own, the stream's thread does all its work) gets no core of its own. Every
 * busy engine thread (a stream at work, an ingest appending) takes one, every producer lent one more; a stream
 * borrows a producer only while one is left after both. So one stream on
 * sixteen cores overlaps, eight streams overlap six of themselves, and on two cores (nothing left once one stream
 * works) no producer exists and streams run exactly as with {@link Overlap#off()}. {@link Overlap#producers(int)}
 * lends up to that many, whatever the machine.
 *
 * <p>A producer is lent for one batch at a time and returned as soon as the batch is made, so a stream that waits for
 * its client holds none.
 */
public final class ProducerPool {
  /** How long an idle producer thread is kept. */
  private static final long KEEP_ALIVE_SECONDS = 30;

  private final String description;
  /** Auto: the cores streams and producers share; forced: unbounded (the producer count alone limits). */
  private final int sharedCores;
  /** The most producers lent at once; 0 when the pool never lends. */
  private final int maxProducers;
  /** Engine threads at work now (each a core in use). */
  private final IntSupplier busyEngineThreads;
  private final AtomicInteger lent = new AtomicInteger();
  /** Null when the pool never lends. */
  private final ThreadPoolExecutor threads;

  private ProducerPool(String description, int sharedCores, int maxProducers, IntSupplier busyEngineThreads) {
    this.description = description;
    this.sharedCores = sharedCores;
    this.maxProducers = maxProducers;
    this.busyEngineThreads = busyEngineThreads;
    if (maxProducers > 0) {
      ThreadPoolExecutor pool = new ThreadPoolExecutor(maxProducers, maxProducers, KEEP_ALIVE_SECONDS,
          TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
          Thread.ofPlatform().name("thallus-server-produce-", 0).daemon().factory());
      pool.allowCoreThreadTimeOut(true);
      this.threads = pool;
    } else {
      this.threads = null;
    }
  }

  /**
   * The pool {@code overlap} asks for on a machine of {@code cores} (the JVM's available processors) whose server
   * runs {@code ioThreads} event loops; {@code busyEngineThreads} says how many engine threads are at work now.
   */
  public static ProducerPool of(Overlap overlap, int cores, int ioThreads, IntSupplier busyEngineThreads) {
    return of(overlap, cores, ioThreads, OptionalInt.empty(), busyEngineThreads);
  }

  /**
   * As {@link #of(Overlap, int, int, IntSupplier)}, for an engine that runs a query on {@code queryThreads} threads
   * ({@link io.thallus.engine.QueryEngine#queryThreads}; empty: unknown, counted as having workers of its own).
   */
  public static ProducerPool of(Overlap overlap, int cores, int ioThreads, OptionalInt queryThreads,
      IntSupplier busyEngineThreads) {
    if (overlap.isAuto()) {
      boolean engineWorkers = queryThreads.orElse(Integer.MAX_VALUE) > 1;
      int shared = cores - ioThreads - (engineWorkers ? 1 : 0);
      // A producer only helps beside a stream that works: at least two shared cores, or none is lent.
      int most = Math.max(0, shared - 1);
      return new ProducerPool("auto: " + (most == 0 ? "off" : "up to " + most + " producers") + " on " + cores
          + " cores" + (queryThreads.isPresent() ? ", engine threads " + queryThreads.getAsInt() : ""), shared, most,
          busyEngineThreads);
    }
    return new ProducerPool(overlap.toString(), Integer.MAX_VALUE, overlap.producers(), busyEngineThreads);
  }

  /** Whether this pool ever lends a producer. */
  boolean lends() {
    return threads != null;
  }

  /**
   * Runs {@code task} on a producer thread if the rule lends one now: its future, completed once the task has
   * returned or thrown (the producer already given back). Null when none is lent: the caller runs it itself.
   */
  <T> CompletableFuture<T> tryLend(Supplier<T> task) {
    if (threads == null || !reserve()) {
      return null;
    }
    CompletableFuture<T> made = new CompletableFuture<>();
    try {
      threads.execute(() -> {
        T value = null;
        Throwable failure = null;
        try {
          value = task.get();
        } catch (Throwable e) {
          failure = e;
        }
        // Given back before the stream learns its batch is made, so its next batch may borrow one again.
        lent.decrementAndGet();
        if (failure == null) {
          made.complete(value);
        } else {
          made.completeExceptionally(failure);
        }
      });
    } catch (RejectedExecutionException shuttingDown) {
      lent.decrementAndGet();
      return null;
    }
    return made;
  }

  /** Takes a producer if one is free under the rule; false otherwise. */
  private boolean reserve() {
    while (true) {
      int now = lent.get();
      if (now >= maxProducers || busyEngineThreads.getAsInt() + now >= sharedCores) {
        return false;
      }
      if (lent.compareAndSet(now, now + 1)) {
        return true;
      }
    }
  }

  /** Stops the threads once their batches are made (streams wait for theirs before they close), within the deadline. */
  public void close(Deadline deadline) {
    if (threads == null) {
      return;
    }
    threads.shutdown();
    try {
      threads.awaitTermination(deadline.remainingMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** What the pool does, e.g. {@code auto: up to 13 producers on 16 cores}, {@code off}, {@code 4}. */
  @Override
  public String toString() {
    return description;
  }
}
