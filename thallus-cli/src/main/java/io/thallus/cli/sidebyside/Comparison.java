package io.thallus.cli.sidebyside;

import com.sun.management.OperatingSystemMXBean;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs peers side by side on the same result: each once to check its data (and warm it up), then {@code runs}
 * timed pulls interleaved (peer 1, peer 2, ..., peer 1, ...) so that every peer sees the same machine noise.
 * Ratios between peers of one comparison are meaningful; absolute numbers across runs much less so.
 */
public final class Comparison {
  private static final OperatingSystemMXBean OS =
      (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

  private Comparison() {}

  /**
   * @param expected the checksum every non-ceiling peer must deliver
   * @param progress where progress bars go (null: none, for many tiny pulls)
   */
  public static List<PeerResult> run(List<Peer> peers, int runs, long expected, PrintStream progress) {
    return run(peers, runs, 0, expected, progress);
  }

  /**
   * As {@link #run(List, int, long, PrintStream)}, after {@code warmups} untimed pulls of each peer, interleaved
   * too: a latency point's few hundred pulls would otherwise measure code the JIT has not compiled yet (a one-row
   * pull took 2-3x as long in its first thousand as after), not a server that has been up for a while.
   */
  public static List<PeerResult> run(List<Peer> peers, int runs, int warmups, long expected,
      PrintStream progress) {
    List<Long> checksums = new ArrayList<>();
    List<Pull> shapes = new ArrayList<>();
    for (Peer peer : peers) {
      Pull verified = peer.pull(peer.verifies(), null);
      checksums.add(peer.verifies() ? verified.checksum() : null);
      shapes.add(verified);
    }
    for (int run = 0; run < warmups; run++) {
      for (Peer peer : peers) {
        peer.pull(false, null);
      }
    }
    List<List<Double>> seconds = new ArrayList<>();
    double[] process = new double[peers.size()];
    double[] server = new double[peers.size()];
    double[] client = new double[peers.size()];
    peers.forEach(p -> seconds.add(new ArrayList<>()));
    for (int run = 1; run <= runs; run++) {
      for (int i = 0; i < peers.size(); i++) {
        Peer peer = peers.get(i);
        try (Progress bar = progress == null ? null
            : new Progress(progress, peer.name() + " run " + run, shapes.get(i).rows())) {
          long cpuBefore = OS.getProcessCpuTime();
          Pull pull = peer.pull(false, bar);
          process[i] += (OS.getProcessCpuTime() - cpuBefore) / 1e9;
          server[i] = pull.serverCpuNanos() < 0 || server[i] < 0 ? -1 : server[i] + pull.serverCpuNanos() / 1e9;
          client[i] = pull.clientCpuNanos() < 0 || client[i] < 0 ? -1 : client[i] + pull.clientCpuNanos() / 1e9;
          seconds.get(i).add(pull.elapsedNanos() / 1e9);
        }
      }
    }
    List<PeerResult> results = new ArrayList<>();
    for (int i = 0; i < peers.size(); i++) {
      Peer peer = peers.get(i);
      Pull shape = shapes.get(i);
      Long checksum = checksums.get(i);
      results.add(new PeerResult(peer.name(), peer.kind(), checksum, checksum == null || checksum == expected,
          shape.rows(), shape.batches(), shape.bytes(), seconds.get(i), process[i], server[i], client[i]));
    }
    return results;
  }
}
