package io.thallus.benchmarks;

import java.util.List;

/**
 * What the suite measures and how often: the paper's sweeps at sizes this 2-core machine finishes in minutes.
 * Fewer repetitions rather than fewer points; the largest size only where the headline needs it.
 *
 * @param headlineRows the headline point's rows (8 BIGINT columns, {@code batchRows} per batch)
 * @param sizes result sizes swept below the headline (the headline's size is added to the sweep)
 * @param columns column counts taken from the 16-column table, at {@code sweepRows}
 * @param batchSizes rows per batch tried at {@code sweepRows} x 8 BIGINT
 * @param runs timed pulls per peer at each point
 * @param headlineRuns timed pulls per peer at the headline point
 * @param latencyRuns timed pulls per peer for results of at most 1000 rows (latency points)
 * @param jdbcRows, jdbcReads, jdbcQueries the JDBC comparison: table rows, timed full reads, timed one-row queries
 */
record Plan(String name, long headlineRows, int batchRows, List<Long> sizes, long sweepRows, List<Integer> columns,
    List<Integer> batchSizes, int runs, int headlineRuns, int latencyRuns, int jdbcRows, int jdbcReads,
    int jdbcQueries) {
  static Plan full() {
    return new Plan("full", 10_000_000, 65_536, List.of(1L, 1_000L, 100_000L, 1_000_000L), 1_000_000,
        List.of(1, 2, 4, 8, 16), List.of(1_024, 65_536, 1_048_576), 5, 9, 101, 1_000_000, 5, 301);
  }

  /** Seconds, for tests and trying the suite out: every experiment and peer, tiny sizes, one run each. */
  static Plan tiny() {
    return new Plan("tiny", 40_000, 8_192, List.of(1L, 1_000L), 20_000, List.of(1, 4), List.of(1_024, 8_192), 1, 1, 3, 20_000, 1,
        3);
  }

  static Plan named(String name) {
    return switch (name) {
      case "full" -> full();
      case "tiny" -> tiny();
      default -> throw new IllegalArgumentException("unknown plan " + name + " (full, tiny)");
    };
  }
}
