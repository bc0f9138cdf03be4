package io.thallus.benchmarks;

import io.thallus.cli.sidebyside.PeerResult;
import java.util.List;

/**
 * One measured point: a query in one setting, and every peer's result on it. {@code bytes} are the Arrow buffer
 * bytes of the result (as DuckDB produced them), the one count every peer's GB/s is computed from.
 */
record Point(String experiment, String setting, String table, long rows, int columns, int batchRows, long bytes,
    long checksum, List<PeerResult> peers) {
  static final String TRANSPORT_ONLY = "transport only";
  static final String END_TO_END = "end to end";

  PeerResult peer(String name) {
    return peers.stream().filter(p -> p.name().equals(name)).findFirst().orElse(null);
  }

  double median(String name) {
    PeerResult peer = peer(name);
    return peer == null ? Double.NaN : peer.medianSeconds();
  }

  double gigabytesPerSecond(String name) {
    return bytes / median(name) / 1e9;
  }

  /** How many times faster {@code name} is than {@code baseline} here (median time ratio). */
  double speedup(String name, String baseline) {
    return median(baseline) / median(name);
  }

  boolean allMatch() {
    return peers.stream().allMatch(PeerResult::matches);
  }
}
