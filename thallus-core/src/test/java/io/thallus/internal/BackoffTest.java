package io.thallus.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The pauses a loop takes between failing tries: doubling from the first to the cap, and back after a success. */
class BackoffTest {
  @Test
  void pausesDoubleUpToTheCapAndStartOverAfterASuccess() {
    Backoff backoff = new Backoff(Duration.ofMillis(10), Duration.ofSeconds(1));
    List<Long> pauses = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      pauses.add(backoff.failed().toMillis());
    }
    assertThat(pauses).containsExactly(10L, 20L, 40L, 80L, 160L, 320L, 640L, 1000L, 1000L, 1000L);

    backoff.succeeded();
    assertThat(backoff.failed()).isEqualTo(Duration.ofMillis(10));
    assertThat(backoff.failed()).isEqualTo(Duration.ofMillis(20));
  }

  @Test
  void aPauseOfNothingOrACapBelowTheFirstIsRefused() {
    assertThatThrownBy(() -> new Backoff(Duration.ZERO, Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new Backoff(Duration.ofSeconds(2), Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
