package io.thallus.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.slf4j.event.EventRecordingLogger;
import org.slf4j.event.Level;
import org.slf4j.event.SubstituteLoggingEvent;
import org.slf4j.helpers.MessageFormatter;
import org.slf4j.helpers.SubstituteLogger;

/** One line per key per interval, and the next line that gets through counts the ones held back. */
class RateLimitedLogTest {
  private final Queue<SubstituteLoggingEvent> events = new ConcurrentLinkedQueue<>();
  private final AtomicLong nanos = new AtomicLong(1_000);
  private final RateLimitedLog log = new RateLimitedLog(
      new EventRecordingLogger(new SubstituteLogger("test", events, false), events), Duration.ofSeconds(1),
      nanos::get);

  @Test
  void aBurstLogsOneLineAndTheNextIntervalsFirstLineSaysHowManyWereHeldBack() {
    for (int i = 0; i < 1_000; i++) {
      log.warn("accept", "listener failed: {}", "EMFILE");
      nanos.addAndGet(TimeUnit.MICROSECONDS.toNanos(100));
    }
    assertThat(lines()).containsExactly("listener failed: EMFILE");

    nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(950));
    log.warn("accept", "listener failed: {}", "EMFILE");
    assertThat(lines()).containsExactly(
        "listener failed: EMFILE (999 more like this in the 1050 ms since the last one were not logged)");

    nanos.addAndGet(TimeUnit.SECONDS.toNanos(5));
    log.warn("accept", "listener failed: {}", "EMFILE");
    assertThat(lines()).as("nothing was held back since").containsExactly("listener failed: EMFILE");
  }

  @Test
  void keysAreLimitedEachOnItsOwn() {
    log.warn("accept", "accept failed");
    log.warn("select", "select failed");
    log.warn("accept", "accept failed");
    assertThat(lines()).containsExactly("accept failed", "select failed");
  }

  @Test
  void aThrowableStaysTheLastArgument() {
    log.warn("accept", "failed: {}", "first");
    nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(10));
    log.warn("accept", "failed: {}", "second");
    nanos.addAndGet(TimeUnit.SECONDS.toNanos(1));
    IllegalStateException cause = new IllegalStateException("boom");
    log.warn("accept", "failed: {}", "third", cause);
    List<SubstituteLoggingEvent> logged = List.copyOf(events);
    assertThat(logged).hasSize(2);
    assertThat(logged.get(1).getThrowable()).isSameAs(cause);
    assertThat(logged.get(1).getLevel()).isEqualTo(Level.WARN);
  }

  /** The lines logged since the last call, formatted as a logger prints them. */
  private List<String> lines() {
    List<String> lines = events.stream()
        .map(e -> MessageFormatter.basicArrayFormat(e.getMessage(), e.getArgumentArray()))
        .toList();
    events.clear();
    return lines;
  }
}
