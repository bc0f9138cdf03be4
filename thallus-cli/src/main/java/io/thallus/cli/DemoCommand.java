package io.thallus.cli;

import io.thallus.cli.sidebyside.PeerResult;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Starts a server on a generated table kept in server memory, pulls it over every transport this machine has and
 * over a raw socket (the ceiling for anything on TCP), and prints what each achieved side by side.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
    description = "Pull a generated table over every transport available here and compare their speed.")
final class DemoCommand implements Callable<Integer> {
  @Option(names = "--rows", defaultValue = "10000000", description = "Rows in the table (default: ${DEFAULT-VALUE}).")
  long rows;

  @Option(names = "--columns", defaultValue = "8", description = "BIGINT columns (default: ${DEFAULT-VALUE}).")
  int columns;

  @Option(names = "--batch-rows", defaultValue = "65536", description = "Rows per batch (default: ${DEFAULT-VALUE}).")
  int batchRows;

  @Option(names = "--runs", defaultValue = "5", description = "Timed pulls per transport (default: ${DEFAULT-VALUE}).")
  int runs;

  @Option(names = "--warmups", defaultValue = "0", description = "Untimed pulls per transport before the timed ones,"
      + " interleaved; for small results, whose first thousand pulls run code the JIT has not compiled yet (default:"
      + " ${DEFAULT-VALUE}).")
  int warmups;

  @Option(names = "--credits", defaultValue = "4", description = "Batches in flight per stream (default: ${DEFAULT-VALUE}).")
  int credits;

  @Option(names = "--transports", split = ",", description = "Transports to compare (default: all available).")
  List<String> transports = List.of();

  @Override
  public Integer call() {
    System.out.printf(Locale.ROOT, "Thallus demo: %,d rows x %d BIGINT in %,d-row batches, prepared in server memory;"
        + " %d timed pulls each%n", rows, columns, batchRows, runs);
    System.out.printf(Locale.ROOT, "machine: %d cores, Java %s%n%n", Runtime.getRuntime().availableProcessors(),
        Runtime.version());
    try (SideBySide bench = new SideBySide(transports, credits)) {
      List<PeerResult> results = bench.transportOnly(SideBySide.bigintSql(rows, columns), batchRows, runs, warmups,
          System.err);
      System.out.println();
      boolean agree = SideBySide.print(results, System.out);
      System.out.println();
      printCeilingShares(results);
      System.out.println(agree ? "all checksums agree with the prepared data"
          : "CHECKSUMS DISAGREE: some transport delivered different data");
      return agree ? 0 : 1;
    }
  }

  /** tcp against the raw socket, shm and cma against memcpy: the shares the design's targets are stated in. */
  static void printCeilingShares(List<PeerResult> results) {
    double raw = SideBySide.median(results, "raw socket");
    double memcpy = SideBySide.median(results, "memcpy");
    double tcp = SideBySide.median(results, "tcp");
    if (!Double.isNaN(tcp)) {
      System.out.printf(Locale.ROOT, "tcp reaches %.0f%% of the raw socket's throughput%n", 100 * raw / tcp);
    }
    for (String sameHost : List.of("shm", "cma")) {
      double seconds = SideBySide.median(results, sameHost);
      if (!Double.isNaN(seconds)) {
        System.out.printf(Locale.ROOT, "%s reaches %.0f%% of a single-thread memcpy%n", sameHost,
            100 * memcpy / seconds);
      }
    }
  }
}
