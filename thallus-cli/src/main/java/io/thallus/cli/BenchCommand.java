package io.thallus.cli;

import io.thallus.cli.sidebyside.PeerResult;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The short benchmark: the paper's two settings at one size each, every transport side by side with its
 * ceilings. The full suite, with Arrow Flight and the sweeps, is the benchmarks module's ({@code benchmarks/run.sh}).
 */
@Command(name = "bench", mixinStandardHelpOptions = true,
    description = "Short benchmark: transport only (with raw socket and memcpy ceilings) and end to end (with "
        + "DuckDB's in-process Arrow export), every transport available here.")
final class BenchCommand implements Callable<Integer> {
  @Option(names = "--rows", defaultValue = "1000000", description = "Rows (default: ${DEFAULT-VALUE}).")
  long rows;

  @Option(names = "--columns", defaultValue = "8", description = "BIGINT columns (default: ${DEFAULT-VALUE}).")
  int columns;

  @Option(names = "--batch-rows", defaultValue = "65536", description = "Rows per batch (default: ${DEFAULT-VALUE}).")
  int batchRows;

  @Option(names = "--runs", defaultValue = "5", description = "Timed pulls per peer (default: ${DEFAULT-VALUE}).")
  int runs;

  @Option(names = "--transports", split = ",", description = "Transports to compare (default: all available).")
  List<String> transports = List.of();

  @Override
  public Integer call() {
    String sql = SideBySide.bigintSql(rows, columns);
    boolean agree;
    try (SideBySide bench = new SideBySide(transports, 4)) {
      System.out.printf(Locale.ROOT, "Thallus bench on %d cores, Java %s; full suite with Arrow Flight: "
          + "benchmarks/run.sh%n%n", Runtime.getRuntime().availableProcessors(), Runtime.version());
      System.out.printf(Locale.ROOT, "1. transport only: %,d rows x %d BIGINT in %,d-row batches prepared in server "
          + "memory, %d timed pulls each, medians%n", rows, columns, batchRows, runs);
      List<PeerResult> transportOnly = bench.transportOnly(sql, batchRows, runs, 0, System.err);
      agree = SideBySide.print(transportOnly, System.out);
      DemoCommand.printCeilingShares(transportOnly);

      System.out.printf(Locale.ROOT, "%n2. end to end: the same SQL run by DuckDB on every pull, %d timed pulls each, "
          + "medians%n", runs);
      // A different text, so the server runs it rather than serving anything prepared.
      List<PeerResult> endToEnd = bench.endToEnd("/* end to end */ " + sql, batchRows, runs, System.err);
      agree &= SideBySide.print(endToEnd, System.out);
      double duckdb = SideBySide.median(endToEnd, "DuckDB export");
      for (String transport : bench.transports()) {
        System.out.printf(Locale.ROOT, "%s end to end takes %.2fx the time of DuckDB's in-process export%n", transport,
            SideBySide.median(endToEnd, transport) / duckdb);
      }
    }
    System.out.println(agree ? "all checksums agree" : "CHECKSUMS DISAGREE: some peer delivered different data");
    return agree ? 0 : 1;
  }
}
