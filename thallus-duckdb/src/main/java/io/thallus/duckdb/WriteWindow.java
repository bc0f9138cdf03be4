package io.thallus.duckdb;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Counts the engine's statements that may commit a write (every statement a session runs, ingests included), so a
 * split can tell whether its partitions' transactions, started one after another, read one snapshot: DuckDB gives
 * each transaction the snapshot of its start, and two starts see the same data exactly when no commit fell between
 * them. A window that was quiet when the starts began (no such statement running) and still is after them, with no
 * statement begun meanwhile, had no commit inside it.
 *
 * <p>A statement that streams rows and commits only when its result closes (an {@code INSERT ... RETURNING} outside a
 * transaction) stays counted until then ({@link #untilClosed}): while its result is open no window is quiet.
 */
final class WriteWindow {
  private final AtomicLong started = new AtomicLong();
  private final AtomicLong finished = new AtomicLong();

  /** Runs {@code statement}, one that may write, counted while it runs. */
  <T> T counting(java.util.function.Supplier<T> statement) {
    started.incrementAndGet();
    try {
      return statement.get();
    } finally {
      finished.incrementAndGet();
    }
  }

  /**
   * Counts a statement whose commit comes later, when its result closes: it counts as running until the returned
   * hold closes (closing it again does nothing).
   */
  AutoCloseable untilClosed() {
    started.incrementAndGet();
    AtomicBoolean open = new AtomicBoolean(true);
    return () -> {
      if (open.compareAndSet(true, false)) {
        finished.incrementAndGet();
      }
    };
  }

  /** A stamp of this quiet moment, or -1 when a statement that may write runs now. */
  long quietStamp() {
    long before = started.get();
    long done = finished.get();
    long after = started.get();
    // started did not move while finished was read: at that instant finished == started means none was running.
    return before == done && done == after ? done : -1;
  }

  /** Whether no statement that may write has begun since {@code stamp} and none runs now. */
  boolean stillQuiet(long stamp) {
    return stamp >= 0 && quietStamp() == stamp;
  }
}
