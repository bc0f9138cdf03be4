package io.thallus.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Runs K tasks at once, one thread each, released together once all K threads stand ready, and times them from the
 * release to the last one's end: the wall time of K clients (or K in-process readers) doing the same work at once.
 * Every wait has a deadline, so a stuck client fails the run instead of hanging it.
 */
final class Together implements AutoCloseable {
  /** One task of a run: the {@code index}-th of K, returning what it checked (rows, say). */
  interface Task<T> {
    T run(int index) throws Exception;
  }

  /** What a run took: wall seconds from the release to the last task's end, and each task's result in order. */
  record Outcome<T>(double seconds, List<T> results) {}

  private final ExecutorService threads;
  private final long deadlineSeconds;

  /** Up to {@code maxTasks} at once, each run given {@code deadlineSeconds} to finish. */
  Together(int maxTasks, long deadlineSeconds) {
    AtomicInteger number = new AtomicInteger();
    this.threads = Executors.newFixedThreadPool(maxTasks, task -> {
      Thread thread = new Thread(task, "scaling-worker-" + number.incrementAndGet());
      thread.setDaemon(true);
      return thread;
    });
    this.deadlineSeconds = deadlineSeconds;
  }

  <T> Outcome<T> run(int count, Task<T> task) throws Exception {
    CountDownLatch ready = new CountDownLatch(count);
    CountDownLatch go = new CountDownLatch(1);
    AtomicLong lastEnd = new AtomicLong(Long.MIN_VALUE);
    List<Future<T>> futures = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      int index = i;
      futures.add(threads.submit(() -> {
        ready.countDown();
        if (!go.await(deadlineSeconds, TimeUnit.SECONDS)) {
          throw new TimeoutException("the other tasks of the run did not get ready in " + deadlineSeconds + " s");
        }
        T result = task.run(index);
        lastEnd.accumulateAndGet(System.nanoTime(), Math::max);
        return result;
      }));
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(deadlineSeconds);
    if (!ready.await(deadlineSeconds, TimeUnit.SECONDS)) {
      futures.forEach(f -> f.cancel(true));
      throw new TimeoutException(count + " tasks did not all start in " + deadlineSeconds + " s");
    }
    long start = System.nanoTime();
    go.countDown();
    List<T> results = new ArrayList<>();
    try {
      for (Future<T> future : futures) {
        results.add(future.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
      }
    } catch (ExecutionException e) {
      futures.forEach(f -> f.cancel(true));
      throw e.getCause() instanceof Exception cause ? cause : e;
    } catch (TimeoutException e) {
      futures.forEach(f -> f.cancel(true));
      throw new TimeoutException(count + " tasks did not finish in " + deadlineSeconds + " s");
    }
    return new Outcome<>((lastEnd.get() - start) / 1e9, results);
  }

  @Override
  public void close() {
    threads.shutdownNow();
  }
}
