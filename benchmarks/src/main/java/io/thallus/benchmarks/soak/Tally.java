package io.thallus.benchmarks.soak;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the soak's actors did, by name: honest work that succeeded or failed (every failure fails the soak, and the
 * first is kept to be printed), and what attackers saw (refused, closed, accepted).
 */
final class Tally {
  private final Map<String, LongAdder> counts = new ConcurrentHashMap<>();
  private final LongAdder honestOk = new LongAdder();
  private final LongAdder honestFailed = new LongAdder();
  private final AtomicReference<String> firstFailure = new AtomicReference<>();

  void honestOk(String what) {
    honestOk.increment();
    count("honest " + what + " ok");
  }

  void honestFailed(String what, Throwable failure) {
    honestFailed.increment();
    count("honest " + what + " failed");
    firstFailure.compareAndSet(null, what + ": " + failure);
  }

  void count(String what) {
    counts.computeIfAbsent(what, k -> new LongAdder()).increment();
  }

  long honestOk() {
    return honestOk.sum();
  }

  long honestFailed() {
    return honestFailed.sum();
  }

  String firstFailure() {
    return firstFailure.get();
  }

  long get(String what) {
    LongAdder count = counts.get(what);
    return count == null ? 0 : count.sum();
  }

  /** Every count, sorted by name, one a line. */
  String report() {
    StringBuilder out = new StringBuilder();
    new TreeMap<>(counts).forEach((name, count) -> out.append("  ").append(name).append(": ").append(count.sum())
        .append('\n'));
    return out.toString();
  }
}
