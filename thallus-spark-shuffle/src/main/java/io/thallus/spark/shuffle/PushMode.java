package io.thallus.spark.shuffle;

import java.util.Locale;

/** {@link ShuffleOptions#EXCHANGE_PUSH}: whether map tasks of the exchange store push to the reducers' executors. */
enum PushMode {
  /** Push when the shuffle's estimated size is at most {@link ShuffleOptions#EXCHANGE_PUSH_MAX_BYTES}. */
  AUTO,
  /** Push every shuffle (when at least two executors registered their endpoints). */
  ON,
  /** Never push: reducers pull every map output. */
  OFF;

  static PushMode of(String value) {
    String named = value.trim().toLowerCase(Locale.ROOT);
    return switch (named) {
      case "auto" -> AUTO;
      case "on" -> ON;
      case "off" -> OFF;
      default -> throw new IllegalArgumentException(ShuffleOptions.EXCHANGE_PUSH
          + " must be one of auto, on, off, not '" + value + "'");
    };
  }
}
