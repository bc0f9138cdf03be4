package io.thallus.cli.sidebyside;

import java.util.List;

/**
 * What one peer achieved in a {@link Comparison}: its timed runs and the CPU they cost, and whether its data
 * matched. {@code checksum} is null for ceilings, whose data is not checked.
 */
public record PeerResult(String name, Peer.Kind kind, Long checksum, boolean matches, long rows, long batches,
    long bytes, List<Double> seconds, double processCpuSeconds, double serverCpuSeconds,
    double clientCpuSeconds) {
  public PeerResult {
    seconds = List.copyOf(seconds);
  }

  public double medianSeconds() {
    return percentile(0.5);
  }

  public double bestSeconds() {
    return seconds.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN);
  }

  /** The value at {@code fraction} of the sorted run times (0.5: the median, averaging the middle two). */
  public double percentile(double fraction) {
    double[] sorted = seconds.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    if (sorted.length == 0) {
      return Double.NaN;
    }
    double position = fraction * (sorted.length - 1);
    int low = (int) Math.floor(position);
    int high = (int) Math.ceil(position);
    return (sorted[low] + sorted[high]) / 2;
  }

  public double gigabytesPerSecond() {
    return bytes / medianSeconds() / 1e9;
  }

  public double rowsPerSecond() {
    return rows / medianSeconds();
  }

  /** Median time per batch, in microseconds. */
  public double microsPerBatch() {
    return medianSeconds() / Math.max(1, batches) * 1e6;
  }

  /** CPU seconds per GB moved, over all timed runs; NaN where the peer cannot tell (or nothing was moved). */
  public double perGigabyte(double cpuSeconds) {
    double gigabytes = seconds.size() * bytes / 1e9;
    return cpuSeconds < 0 || gigabytes == 0 ? Double.NaN : cpuSeconds / gigabytes;
  }
}
