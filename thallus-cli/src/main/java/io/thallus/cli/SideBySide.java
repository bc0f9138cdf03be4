package io.thallus.cli;

import io.thallus.ClientOptions;
import io.thallus.Location;
import io.thallus.QueryRequest;
import io.thallus.ThallusClient;
import io.thallus.server.ThallusServer;
import io.thallus.cli.sidebyside.Comparison;
import io.thallus.cli.sidebyside.Peer;
import io.thallus.cli.sidebyside.PeerResult;
import io.thallus.cli.sidebyside.Peers;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.spi.BatchContents;
import io.thallus.cli.sidebyside.PreparedQueryEngine;
import io.thallus.spi.Transport;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * An embedded server and one long-lived client per transport, as an application has them (connecting is not what
 * is timed), for {@code demo} and {@code bench}: compares the transports on one result, transport only (prepared in
 * server memory first) or end to end (DuckDB runs the SQL on every pull), and prints the table.
 */
final class SideBySide implements AutoCloseable {
  private final BufferAllocator allocator = new RootAllocator();
  private final BufferAllocator preparedMemory = allocator.newChildAllocator("prepared", 0, Long.MAX_VALUE);
  private final BufferAllocator clientMemory = new RootAllocator();
  private final PreparedQueryEngine engine = new PreparedQueryEngine(DuckDBEngine.create(), preparedMemory);
  private final ThallusServer server;
  private final Map<String, ThallusClient> clients = new LinkedHashMap<>();
  private final int credits;

  SideBySide(List<String> requested, int credits) {
    this.credits = credits;
    server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), engine).build().start();
    // Named transports are used as named (an unusable one is an error); by default, every one usable here.
    for (Transport transport : Transport.installed(requested)) {
      if (!requested.isEmpty() || transport.isAvailableFor("127.0.0.1")) {
        clients.put(transport.name(), null);
      }
    }
  }

  /** A generated table: {@code columns} distinct BIGINT columns. */
  static String bigintSql(long rows, int columns) {
    return "SELECT " + IntStream.range(0, columns).mapToObj(c -> "i * " + (c + 1) + " AS c" + c)
        .collect(Collectors.joining(", ")) + " FROM range(" + rows + ") t(i)";
  }

  List<String> transports() {
    return List.copyOf(clients.keySet());
  }

  private ThallusClient client(String transport, int batchRows) {
    ThallusClient client = clients.get(transport);
    if (client == null) {
      ClientOptions options = ClientOptions.builder().batchRows(batchRows).credits(credits).build();
      client = ThallusClient.connect(clientMemory, server.getLocation().withTransport(transport), options);
      clients.put(transport, client);
    }
    return client;
  }

  /** Every transport plus the raw socket and memcpy ceilings on the same prepared batches, after {@code warmups}. */
  List<PeerResult> transportOnly(String sql, int batchRows, int runs, int warmups, PrintStream progress) {
    engine.prepare(sql, batchRows);
    try {
      List<BatchContents> prepared = engine.batches(sql, batchRows);
      long expected = Peers.inProcess("prepared", Peer.Kind.CEILING, engine, Peers.spec(sql, batchRows), allocator)
          .pull(true, null).checksum();
      List<Peer> peers = new ArrayList<>();
      for (String name : transports()) {
        peers.add(Peers.thallus(name, client(name, batchRows), QueryRequest.builder(sql).batchRows(batchRows).build()));
      }
      try (Peer raw = Peers.rawSocket(prepared); Peer memcpy = Peers.memcpy(prepared)) {
        peers.add(raw);
        peers.add(memcpy);
        return Comparison.run(peers, runs, warmups, expected, progress);
      }
    } finally {
      engine.forget(sql, batchRows);
    }
  }

  /** Every transport with DuckDB running the SQL on each pull, next to DuckDB's own in-process Arrow export. */
  List<PeerResult> endToEnd(String sql, int batchRows, int runs, PrintStream progress) {
    List<Peer> peers = new ArrayList<>();
    for (String name : transports()) {
      peers.add(Peers.thallus(name, client(name, batchRows), QueryRequest.builder(sql).batchRows(batchRows).build()));
    }
    Peer duckdb = Peers.inProcess("DuckDB export", Peer.Kind.CEILING, engine, Peers.spec(sql, batchRows), allocator);
    peers.add(duckdb);
    long expected = duckdb.pull(true, null).checksum();
    return Comparison.run(peers, runs, expected, progress);
  }

  /** Prints the table; returns whether every checked peer delivered the expected data. */
  static boolean print(List<PeerResult> results, PrintStream out) {
    TextTable table = new TextTable(List.of("peer", "median s", "GB/s", "best GB/s", "M rows/s", "us/batch", "x ipc",
        "server CPU s/GB", "client CPU s/GB", "process CPU s/GB", "checksum"));
    double ipc = results.stream().filter(r -> r.name().equals("ipc")).mapToDouble(PeerResult::medianSeconds)
        .findFirst().orElse(Double.NaN);
    boolean agree = true;
    for (PeerResult result : results) {
      agree &= result.matches();
      String name = result.kind() == Peer.Kind.CEILING ? result.name() + " (ceiling)" : result.name();
      String checksum = result.checksum() == null ? "-"
          : String.format(Locale.ROOT, "%016x%s", result.checksum(), result.matches() ? "" : " MISMATCH");
      table.add(List.of(name, fmt("%.3f", result.medianSeconds()), fmt("%.2f", result.gigabytesPerSecond()),
          fmt("%.2f", result.bytes() / result.bestSeconds() / 1e9), fmt("%.1f", result.rowsPerSecond() / 1e6),
          fmt("%.0f", result.microsPerBatch()),
          Double.isNaN(ipc) ? "-" : fmt("%.2fx", ipc / result.medianSeconds()),
          fmt("%.3f", result.perGigabyte(result.serverCpuSeconds())),
          fmt("%.3f", result.perGigabyte(result.clientCpuSeconds())),
          fmt("%.3f", result.perGigabyte(result.processCpuSeconds())), checksum));
    }
    table.print(out);
    return agree;
  }

  /** The median of {@code name} in {@code results}, or NaN. */
  static double median(List<PeerResult> results, String name) {
    return results.stream().filter(r -> r.name().equals(name)).mapToDouble(PeerResult::medianSeconds).findFirst()
        .orElse(Double.NaN);
  }

  private static String fmt(String format, double value) {
    return Double.isNaN(value) ? "-" : String.format(Locale.ROOT, format, value);
  }

  @Override
  public void close() {
    clients.values().stream().filter(c -> c != null).forEach(ThallusClient::close);
    server.close();
    clientMemory.close();
    engine.close();
    preparedMemory.close();
    allocator.close();
  }
}
