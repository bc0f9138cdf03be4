package io.thallus.benchmarks;

import io.thallus.ClientOptions;
import io.thallus.Location;
import io.thallus.QueryRequest;
import io.thallus.ThallusClient;
import io.thallus.cli.sidebyside.Comparison;
import io.thallus.cli.sidebyside.Peer;
import io.thallus.cli.sidebyside.PeerResult;
import io.thallus.cli.sidebyside.Peers;
import io.thallus.cli.sidebyside.Pull;
import io.thallus.server.Overlap;
import io.thallus.spi.BatchContents;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * The suite's end-to-end headline with the overlap off beside forced on ({@link Overlap}): {@code SELECT * FROM big}
 * (8 BIGINT columns, 64K-row batches, DuckDB runs it on every pull) over each transport, from two servers of the
 * suite's {@link Fixture}, one with {@link Overlap#off()} and one with {@link Overlap#producers}, each over its own
 * DuckDB holding the same table; pulls interleaved, as the suite's, next to the engine's in-process export. Then the
 * same with the result prepared in server memory (transport only), where a producer has nothing to overlap. Every
 * pull's data is checked against the in-process pull's checksum.
 *
 * <pre>java ... io.thallus.benchmarks.OverlapBench [rows] [runs] [producers] [transports]</pre>
 * (default 10000000 rows, 1 run, 4 producers, shm,tcp). Prints a Markdown table.
 */
public final class OverlapBench {
  private OverlapBench() {}

  public static void main(String[] args) throws Exception {
    long rows = args.length > 0 ? Long.parseLong(args[0]) : 10_000_000;
    int runs = args.length > 1 ? Integer.parseInt(args[1]) : 1;
    int producers = args.length > 2 ? Integer.parseInt(args[2]) : 4;
    List<String> transports = List.of((args.length > 3 ? args[3] : "shm,tcp").split(","));
    int batchRows = 65_536;
    String table = "CREATE TABLE big AS SELECT " + IntStream.range(0, 8).mapToObj(c -> "i * " + (c + 1) + " AS c" + c)
        .collect(Collectors.joining(", ")) + " FROM range(" + rows + ") t(i)";
    try (BufferAllocator memory = new RootAllocator();
         Fixture off = new Fixture(Overlap.off());
         Fixture on = new Fixture(Overlap.producers(producers))) {
      off.execute(table);
      on.execute(table);
      System.out.printf(Locale.ROOT, "%,d rows x 8 BIGINT, %,d-row batches, %d run(s), %d cores%n", rows, batchRows,
          runs, Runtime.getRuntime().availableProcessors());
      String live = "/* end to end */ SELECT * FROM big";
      Peer duckdb = off.inProcess(live, batchRows);
      boolean ok = compare("End to end (DuckDB runs the query on every pull; ceiling: the engine's in-process export)",
          live, duckdb.pull(true, null).checksum(), duckdb, memory, off, on, producers, transports, batchRows, runs);
      // The same result prepared in each server's memory: what a producer costs where making a batch costs nothing.
      String prepared = "SELECT * FROM big";
      List<BatchContents> batches = off.prepare(prepared, batchRows);
      on.prepare(prepared, batchRows);
      try (Peer memcpy = Peers.memcpy(batches)) {
        ok &= compare("Transport only (the result prepared in server memory; ceiling: memcpy of it)", prepared,
            off.inProcess(prepared, batchRows).pull(true, null).checksum(), memcpy, memory, off, on, producers,
            transports, batchRows, runs);
      }
      off.forget(prepared, batchRows);
      on.forget(prepared, batchRows);
      if (!ok) {
        System.exit(1);
      }
    }
  }

  /** One side-by-side comparison, printed; whether every peer delivered {@code expected} (a checksum). */
  private static boolean compare(String title, String sql, long expected, Peer ceiling, BufferAllocator memory,
      Fixture off, Fixture on, int producers, List<String> transports, int batchRows, int runs) {
    List<ThallusClient> clients = new ArrayList<>();
    try {
      List<Peer> peers = new ArrayList<>();
      for (String transport : transports) {
        for (Fixture fixture : List.of(off, on)) {
          ThallusClient client = ThallusClient.connect(memory, Location.of("127.0.0.1", fixture.thallusPort(),
              transport), ClientOptions.builder().batchRows(batchRows).build());
          clients.add(client);
          peers.add(Peers.thallus(transport + (fixture == off ? " off" : " on (" + producers + ")"), client,
              QueryRequest.builder(sql).batchRows(batchRows).build()));
        }
      }
      peers.add(ceiling);
      List<PeerResult> results = Comparison.run(peers, runs, 0, expected, null);
      double ceilingRate = results.getLast().gigabytesPerSecond();
      System.out.printf(Locale.ROOT, "%n%s%n%n", title);
      System.out.println("| peer | median s | GB/s | x ceiling | server CPU s | data |");
      System.out.println("|---|---|---|---|---|---|");
      for (PeerResult result : results) {
        System.out.printf(Locale.ROOT, "| %s | %.3f | %.2f | %.2f | %s | %s |%n", result.name(),
            result.medianSeconds(), result.gigabytesPerSecond(), result.gigabytesPerSecond() / ceilingRate,
            result.serverCpuSeconds() < 0 ? "-" : String.format(Locale.ROOT, "%.2f", result.serverCpuSeconds()),
            result.checksum() == null ? "ceiling" : result.matches() ? "ok" : "MISMATCH");
      }
      return results.stream().allMatch(PeerResult::matches);
    } finally {
      clients.forEach(ThallusClient::close);
    }
  }
}
