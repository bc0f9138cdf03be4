package io.thallus.benchmarks;

import java.util.List;

/**
 * What {@link ScalingBench} measures: the table's rows (8 BIGINT columns), the batch size, the numbers of clients
 * tried and the timed rounds at each. {@code small} fits the shared 2-core box in a few minutes; {@code full} is the
 * issue's setting (10M rows, K = 1 to 16), sized to finish in under 8 minutes on a 16-core machine (how that was
 * estimated: {@code benchmarks/multicore/README.md}).
 *
 * @param rows rows of {@code big} and of the batches each ingest writes
 * @param batchRows rows per batch, read and ingest
 * @param clients the numbers of clients (and of in-process readers or writers) run at once, in order
 * @param rounds timed rounds per peer at each number of clients; the figure is their median
 */
record ScalingPlan(String name, long rows, int batchRows, List<Integer> clients, int rounds) {
  ScalingPlan {
    if (rows < 1 || batchRows < 1 || rounds < 1 || clients.isEmpty() || clients.stream().anyMatch(k -> k < 1)) {
      throw new IllegalArgumentException("a scaling plan needs rows, batch rows, rounds and client counts of at "
          + "least 1: " + rows + ", " + batchRows + ", " + rounds + ", " + clients);
    }
    clients = List.copyOf(clients);
  }

  /**
   * Two timed rounds: from the 2-core box's per-byte times, three would pass 8 minutes on 16 cores in the pessimistic
   * estimate ({@code benchmarks/multicore/README.md}); the untimed warm-up of every peer comes on top.
   */
  static ScalingPlan full() {
    return new ScalingPlan("full", 10_000_000, 65_536, List.of(1, 2, 4, 8, 16), 2);
  }

  /** The 2-core box: a tenth of the rows, up to 8 clients, three timed rounds (about 2 minutes there). */
  static ScalingPlan small() {
    return new ScalingPlan("small", 1_000_000, 65_536, List.of(1, 2, 4, 8), 3);
  }

  /** Seconds: for the test that runs every section once and checks the output. */
  static ScalingPlan tiny() {
    return new ScalingPlan("tiny", 50_000, 8_192, List.of(1, 2), 1);
  }

  static ScalingPlan named(String name) {
    return switch (name) {
      case "full" -> full();
      case "small" -> small();
      case "tiny" -> tiny();
      default -> throw new IllegalArgumentException("unknown scaling plan " + name + " (full, small, tiny)");
    };
  }

  int maxClients() {
    return clients.stream().mapToInt(Integer::intValue).max().orElseThrow();
  }
}
