package io.thallus.internal;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import org.slf4j.Logger;

/**
 * A logger's warnings at most once per key per interval, for failures that can repeat thousands of times a second
 * (a listener that cannot accept). The next line that gets through says how many were held back, so the log still
 * shows that it went on and how often. Keys name the kind of line; use a small, fixed set.
 */
public final class RateLimitedLog {
  private final Logger logger;
  private final long intervalNanos;
  private final LongSupplier nanoClock;
  private final Map<String, KeyState> keys = new ConcurrentHashMap<>();

  private static final class KeyState {
    boolean loggedBefore;
    long lastLoggedNanos;
    long heldBack;
  }

  public RateLimitedLog(Logger logger, Duration interval) {
    this(logger, interval, System::nanoTime);
  }

  /** With a clock of the caller's, in nanoseconds like {@link System#nanoTime()}, so tests need not sleep. */
  RateLimitedLog(Logger logger, Duration interval, LongSupplier nanoClock) {
    this.logger = logger;
    this.intervalNanos = interval.toNanos();
    this.nanoClock = nanoClock;
  }

  /** Logs a warning, as {@link Logger#warn(String, Object...)}, unless this key's last one is under an interval old. */
  public void warn(String key, String format, Object... args) {
    if (!logger.isWarnEnabled()) {
      return;
    }
    KeyState state = keys.computeIfAbsent(key, k -> new KeyState());
    long heldBack;
    long sinceLastMillis;
    synchronized (state) {
      long now = nanoClock.getAsLong();
      sinceLastMillis = (now - state.lastLoggedNanos) / 1_000_000;
      if (state.loggedBefore && now - state.lastLoggedNanos < intervalNanos) {
        state.heldBack++;
        return;
      }
      heldBack = state.heldBack;
      state.heldBack = 0;
      state.loggedBefore = true;
      state.lastLoggedNanos = now;
    }
    // The count goes into the format itself, not the arguments: a Throwable must stay the last argument.
    logger.warn(heldBack == 0 ? format : format + " (" + heldBack + " more like this in the " + sinceLastMillis
        + " ms since the last one were not logged)", args);
  }
}
