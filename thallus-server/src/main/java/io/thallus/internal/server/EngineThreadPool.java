package io.thallus.internal.server;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The server's engine threads (streams' steps, ingests, describes), which also count how many of them are at work
 * now. The {@link ProducerPool} reads that count after every full batch: a plain counter, where the executor's own
 * {@code getActiveCount} takes the pool's main lock and walks its workers.
 */
public final class EngineThreadPool extends ThreadPoolExecutor {
  /** How long an idle engine thread is kept. */
  private static final long KEEP_ALIVE_SECONDS = 30;

  private final AtomicInteger busy = new AtomicInteger();

  /** {@code threads} engine threads at most, made as needed and let go when idle. */
  public EngineThreadPool(int threads) {
    super(threads, threads, KEEP_ALIVE_SECONDS, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
        Thread.ofPlatform().name("thallus-server-stream-", 0).daemon().factory());
    allowCoreThreadTimeOut(true);
  }

  /** Engine threads running a task now. */
  public int busy() {
    return busy.get();
  }

  @Override
  protected void beforeExecute(Thread thread, Runnable task) {
    busy.incrementAndGet();
    super.beforeExecute(thread, task);
  }

  @Override
  protected void afterExecute(Runnable task, Throwable failure) {
    try {
      super.afterExecute(task, failure);
    } finally {
      busy.decrementAndGet();
    }
  }
}
