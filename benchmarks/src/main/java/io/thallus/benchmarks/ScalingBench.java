package io.thallus.benchmarks;

import io.thallus.ClientOptions;
import io.thallus.Location;
import io.thallus.ThallusClient;
import io.thallus.cli.sidebyside.Peers;
import io.thallus.cli.sidebyside.PreparedQueryEngine;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.engine.QueryResult;
import io.thallus.internal.Transports;
import io.thallus.server.ThallusServer;
import io.thallus.spi.BatchContents;
import io.thallus.spi.Transport;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.duckdb.DuckDBConnection;

/**
 * Many clients at once (issue 36): K = 1, 2, 4, 8, 16 clients in this JVM with the server, per transport, each
 * pulling {@code SELECT * FROM big} (8 BIGINT columns) or ingesting the same batches into a table of its own, end to
 * end and transport only; aggregate GB/s next to K in-process readers (or writers) of plain DuckDB (its JDBC
 * driver's {@code arrowExportStream}, default settings, a connection each) and of the engine's own in-process export
 * or ingest (what the suite calls its ceiling), and, transport only, K single-thread memcpys or K in-process readers
 * of the batches. Every result is checked: each reader's rows and first column's sum on every timed pull, every
 * column's sum on an untimed warm-up pull; every ingested table's rows and column sums, read back untimed. Writes
 * {@code scaling.md}, {@code scaling.csv} (every round) and {@code machine.txt}. Loads no Flight, gRPC or JDBC
 * driver class other than DuckDB's, so it runs from a small class path ({@code benchmarks/multicore/}).
 *
 * <pre>java ... io.thallus.benchmarks.ScalingBench [--plan full|small|tiny] [--out folder]
 *     [--transports shm,tcp,cma] [--only read|ingest] [--clients 1,2,4] [--rounds 1] [--ingest-credits 8]</pre>
 *
 * ({@code --clients} and {@code --rounds} narrow a plan, for a profiling run; {@code --ingest-credits} sets the
 * batches each ingesting client may have in flight, default 8, for a sweep of how far receiving must run ahead of
 * DuckDB's workers.)
 */
public final class ScalingBench implements AutoCloseable {
  private static final String READ_SQL = "SELECT * FROM big";
  private static final String PREPARED_SQL = "/* transport only */ SELECT * FROM big";
  private static final long DEADLINE_SECONDS = 600;
  /** Batches an ingesting client may have in flight unless told: as {@link IngestBench}'s clients. */
  private static final int DEFAULT_INGEST_CREDITS = 8;

  private final ScalingPlan plan;
  private final List<String> transports;
  private final PrintStream log;
  private final Together together;
  private final StringBuilder report = new StringBuilder();
  private final StringBuilder csv = new StringBuilder("section,peer,clients,round,seconds,bytes_per_client\n");
  private final Path out;
  /** Batches each ingesting client may have in flight. */
  private final int ingestCredits;

  private ScalingBench(ScalingPlan plan, List<String> transports, int ingestCredits, Path out, PrintStream log) {
    this.plan = plan;
    this.ingestCredits = ingestCredits;
    this.out = out;
    this.transports = transports;
    this.log = log;
    this.together = new Together(plan.maxClients(), DEADLINE_SECONDS);
  }

  public static void main(String[] args) throws Exception {
    String planName = "full";
    Path out = Path.of("scaling-out");
    List<String> wanted = List.of("shm", "tcp", "cma");
    String only = "all";
    List<Integer> clients = null;
    Integer rounds = null;
    int ingestCredits = DEFAULT_INGEST_CREDITS;
    for (int i = 0; i < args.length; i++) {
      String value = i + 1 < args.length ? args[i + 1] : null;
      switch (args[i]) {
        case "--plan" -> planName = value;
        case "--out" -> out = Path.of(value);
        case "--transports" -> wanted = List.of(value.split(","));
        case "--only" -> only = value;
        case "--clients" -> clients = Arrays.stream(value.split(",")).map(Integer::valueOf).toList();
        case "--rounds" -> rounds = Integer.valueOf(value);
        case "--ingest-credits" -> ingestCredits = Integer.parseInt(value);
        default -> throw new IllegalArgumentException("usage: ScalingBench [--plan full|small|tiny] [--out folder] "
            + "[--transports shm,tcp,cma] [--only read|ingest] [--clients 16] [--rounds 1] [--ingest-credits 8]; got "
            + args[i]);
      }
      i++;
    }
    if (!List.of("all", "read", "ingest").contains(only)) {
      throw new IllegalArgumentException("--only takes read or ingest, got " + only);
    }
    ScalingPlan plan = ScalingPlan.named(planName);
    // A profiling run takes one K and fewer rounds of a plan: the same sizes, one setting under the profiler.
    plan = new ScalingPlan(plan.name() + (clients != null || rounds != null ? " (narrowed)" : ""), plan.rows(),
        plan.batchRows(), clients != null ? clients : plan.clients(), rounds != null ? rounds : plan.rounds());
    if (ingestCredits < 1) {
      throw new IllegalArgumentException("--ingest-credits takes a positive number, got " + ingestCredits);
    }
    run(plan, wanted, only, ingestCredits, out, System.out);
  }

  /** Runs the plan's sections and writes the outputs; throws when any result or table differs from its source. */
  static void run(ScalingPlan plan, List<String> wanted, String only, Path out, PrintStream log) throws Exception {
    run(plan, wanted, only, DEFAULT_INGEST_CREDITS, out, log);
  }

  /** As {@link #run(ScalingPlan, List, String, Path, PrintStream)}, each ingesting client with these credits. */
  static void run(ScalingPlan plan, List<String> wanted, String only, int ingestCredits, Path out, PrintStream log)
      throws Exception {
    Files.createDirectories(out);
    long start = System.nanoTime();
    List<String> usable = new ArrayList<>();
    for (Transport transport : Transports.available()) {
      if (transport.isAvailableFor("127.0.0.1")) {
        usable.add(transport.name());
      }
    }
    List<String> transports = wanted.stream().filter(usable::contains).toList();
    log.printf(Locale.ROOT, "scaling benchmark, plan %s: %,d rows x 8 BIGINT, %,d-row batches, K = %s, %d timed "
        + "round(s); transports %s (asked %s, usable here %s); %d cores%n", plan.name(), plan.rows(),
        plan.batchRows(), plan.clients(), plan.rounds(), transports, wanted, usable,
        Runtime.getRuntime().availableProcessors());
    try (ScalingBench bench = new ScalingBench(plan, transports, ingestCredits, out, log)) {
      bench.measure(only);
    }
    log.printf(Locale.ROOT, "scaling benchmark done in %.1f s; results in %s%n", (System.nanoTime() - start) / 1e9,
        out);
  }

  private void measure(String only) throws Exception {
    int most = plan.maxClients();
    String table = "CREATE TABLE big AS SELECT " + IntStream.range(0, 8).mapToObj(c -> "i * " + (c + 1) + " AS c" + c)
        .collect(Collectors.joining(", ")) + " FROM range(" + plan.rows() + ") t(i)";
    try (BufferAllocator root = new RootAllocator();
         BufferAllocator prepared = root.newChildAllocator("prepared", 0, Long.MAX_VALUE);
         BufferAllocator inProcess = root.newChildAllocator("in-process", 0, Long.MAX_VALUE);
         BufferAllocator clientMemory = root.newChildAllocator("clients", 0, Long.MAX_VALUE);
         PreparedQueryEngine engine = new PreparedQueryEngine(DuckDBEngine.create(), prepared);
         ThallusServer server = ThallusServer.builder(root, Location.of("127.0.0.1", 0), engine)
             .memoryPerClient(4L << 30).build().start();
         ScalingIngests.TableDrain drain = new ScalingIngests.TableDrain();
         ThallusServer drainServer = ThallusServer.builder(root, Location.of("127.0.0.1", 0), drain)
             .memoryPerClient(4L << 30).build().start();
         DuckDBConnection plain = (DuckDBConnection) DriverManager.getConnection("jdbc:duckdb:");
         Clients clients = new Clients(clientMemory, most, ingestCredits)) {
      String duckdbVersion;
      try (Statement statement = plain.createStatement()) {
        statement.execute(table);
        var version = statement.executeQuery("SELECT version()");
        version.next();
        duckdbVersion = version.getString(1);
      }
      Files.writeString(out.resolve("machine.txt"), Machine.engineSide(duckdbVersion));
      execute(engine, table, inProcess);
      List<DuckDBConnection> plainConnections = new ArrayList<>();
      for (int i = 0; i < most; i++) {
        plainConnections.add((DuckDBConnection) plain.duplicate());
      }
      try {
        header();
        if (!only.equals("ingest")) {
          long bytes = engine.prepare(PREPARED_SQL, plan.batchRows());
          try {
            reads(engine, server, clients, plainConnections, inProcess, bytes);
          } finally {
            engine.forget(PREPARED_SQL, plan.batchRows());
          }
        }
        if (!only.equals("read")) {
          ingests(engine, server, drainServer, drain, clients, plainConnections, root);
        }
      } finally {
        for (DuckDBConnection connection : plainConnections) {
          connection.close();
        }
      }
    }
  }

  private void header() {
    report.append(String.format(Locale.ROOT, "## Many clients at once: plan `%s`, %d cores%n%n", plan.name(),
        Runtime.getRuntime().availableProcessors()));
    report.append(String.format(Locale.ROOT, "`big`: %,d rows x 8 BIGINT, %,d-row batches; K = %s clients in the "
        + "server's JVM, each on a connection of its own, all released together; a figure is K x the result's Arrow "
        + "buffer bytes over the wall time from the release to the last client's end (aggregate GB/s), the median "
        + "of %d round(s). Every ratio names its ceiling: *plain DuckDB* is K threads reading DuckDB's JDBC "
        + "`arrowExportStream` (default settings, a connection each); *engine* is K threads running the same query "
        + "through the server's engine in process (the suite's ceiling); *memcpy* is K single-thread copies of the "
        + "prepared buffers. Transports: %s; each ingesting client has %d credits.%n%n", plan.rows(), plan.batchRows(),
        plan.clients(), plan.rounds(), transports, ingestCredits));
  }

  private void reads(PreparedQueryEngine engine, ThallusServer server, Clients clients,
      List<DuckDBConnection> plainConnections, BufferAllocator inProcess, long bytes) throws Exception {
    long rows = plan.rows();
    long[] sums = new long[8];
    for (int c = 0; c < 8; c++) {
      sums[c] = (c + 1) * (rows * (rows - 1) / 2);
    }
    List<ScalingPeer> endToEnd = new ArrayList<>();
    for (String transport : transports) {
      endToEnd.add(ScalingReads.thallus(transport, clients.reading(server, transport, plan.batchRows()), READ_SQL,
          plan.batchRows()));
    }
    endToEnd.add(ScalingReads.engine(engine, READ_SQL, plan.batchRows(), inProcess));
    endToEnd.add(ScalingReads.plainDuckDB(plainConnections, READ_SQL, plan.batchRows(), inProcess));
    section("Read, end to end", "`SELECT * FROM big` run by DuckDB for every client", endToEnd, bytes,
        new ScalingPeer.Tally(rows, sums), List.of(ScalingReads.PLAIN_DUCKDB, ScalingReads.ENGINE));
    List<ScalingPeer> transportOnly = new ArrayList<>();
    for (String transport : transports) {
      transportOnly.add(ScalingReads.thallus(transport, clients.reading(server, transport, plan.batchRows()),
          PREPARED_SQL, plan.batchRows()));
    }
    try (ScalingPeer memcpy = ScalingReads.memcpy(engine.batches(PREPARED_SQL, plan.batchRows()),
        plan.maxClients())) {
      transportOnly.add(memcpy);
      section("Read, transport only", "the result computed once and kept in server memory; every client pulls it",
          transportOnly, bytes, new ScalingPeer.Tally(rows, sums), List.of(ScalingReads.MEMCPY));
    }
  }

  private void ingests(PreparedQueryEngine engine, ThallusServer server, ThallusServer drainServer,
      ScalingIngests.TableDrain drain, Clients clients, List<DuckDBConnection> plainConnections,
      BufferAllocator root) throws Exception {
    String source = "SELECT " + IntStream.range(0, 8).mapToObj(c -> "i * " + (c + 1) + " AS c" + c)
        .collect(Collectors.joining(", ")) + " FROM range(" + plan.rows() + ") t(i)";
    try (BufferAllocator memory = root.newChildAllocator("ingest source", 0, Long.MAX_VALUE);
         IngestBench.Batches batches = IngestBench.Batches.of(source, plan.batchRows(), memory)) {
      ScalingPeer.Tally expected;
      try (var reader = batches.reader()) {
        ScalingPeer.Adder adder = new ScalingPeer.Adder(true);
        while (reader.loadNextBatch()) {
          adder.add(reader.getVectorSchemaRoot());
        }
        expected = adder.tally();
      }
      List<ScalingPeer> endToEnd = new ArrayList<>();
      for (String transport : transports) {
        endToEnd.add(ScalingIngests.thallus(transport, clients.ingesting(server, transport), batches, engine,
            memory));
      }
      try (ScalingPeer engineIngest = ScalingIngests.engine(engine, batches, plan.maxClients(), memory)) {
        endToEnd.add(engineIngest);
        endToEnd.add(ScalingIngests.plainDuckDB(plainConnections, batches, memory));
        section("Ingest, end to end", "each client writes the same batches (held in client memory) into a DuckDB "
            + "table of its own (create or replace)", endToEnd, batches.bytes(), expected,
            List.of(ScalingIngests.PLAIN_DUCKDB, ScalingIngests.ENGINE));
      }
      List<ScalingPeer> transportOnly = new ArrayList<>();
      for (String transport : transports) {
        transportOnly.add(ScalingIngests.drained(transport, clients.ingesting(drainServer, transport), batches,
            drain));
      }
      transportOnly.add(ScalingIngests.readInProcess(batches, plan.maxClients()));
      section("Ingest, transport only", "the same batches to a server whose engine only reads them (rows and the "
          + "first column's sum)", transportOnly, batches.bytes(), expected,
          List.of(ScalingIngests.READ_IN_PROCESS));
    }
  }

  /**
   * One section: an untimed warm-up of every peer that checks every column, then at each K the timed rounds, peers
   * interleaved so each sees the same noise; then the tables.
   */
  private void section(String title, String what, List<ScalingPeer> peers, long bytes, ScalingPeer.Tally expected,
      List<String> ceilings) throws Exception {
    long start = System.nanoTime();
    Map<String, Map<Integer, List<Double>>> seconds = new HashMap<>();
    int warmClients = Math.min(2, plan.maxClients());
    for (ScalingPeer peer : peers) {
      runChecked(peer, warmClients, true, expected);
    }
    for (int clients : plan.clients()) {
      for (int round = 0; round < plan.rounds(); round++) {
        for (ScalingPeer peer : peers) {
          double wall = runChecked(peer, clients, false, expected);
          seconds.computeIfAbsent(peer.name(), name -> new HashMap<>())
              .computeIfAbsent(clients, k -> new ArrayList<>()).add(wall);
          // Quoted: the section and peer names hold commas and spaces.
          csv.append(String.format(Locale.ROOT, "\"%s\",\"%s\",%d,%d,%.6f,%d%n", title, peer.name(), clients,
              round, wall, bytes));
        }
      }
      log.printf(Locale.ROOT, "%-22s K=%2d: %s%n", title, clients, peers.stream()
          .map(p -> String.format(Locale.ROOT, "%s %.2f GB/s", p.name(), gigabytes(bytes, clients,
              seconds.get(p.name()).get(clients))))
          .collect(Collectors.joining(", ")));
    }
    double elapsed = (System.nanoTime() - start) / 1e9;
    table(title, what, peers, bytes, seconds, ceilings, elapsed);
    // Written after every section, so a run stopped by its time limit keeps what it measured.
    Files.writeString(out.resolve("scaling.md"), report);
    Files.writeString(out.resolve("scaling.csv"), csv);
  }

  /** Runs {@code peer} with K at once, checks every reader's or writer's data, and returns the wall seconds. */
  private double runChecked(ScalingPeer peer, int clients, boolean everyColumn, ScalingPeer.Tally expected)
      throws Exception {
    Together.Outcome<ScalingPeer.Tally> outcome = together.run(clients, index -> peer.run(index, everyColumn));
    for (int i = 0; i < clients; i++) {
      ScalingPeer.Tally got = outcome.results().get(i);
      if (peer instanceof ScalingIngests.IngestPeer ingest) {
        // The write's own count, then what landed: every column's sum in a table, the first column's in a drain.
        check(peer, clients, i, got, expected, got.sums().length);
        ScalingPeer.Tally written = ingest.written(i);
        check(peer, clients, i, written, expected, Math.max(1, written.sums().length));
      } else {
        check(peer, clients, i, got, expected, peer.name().equals(ScalingReads.MEMCPY) ? 0 : everyColumn ? 8 : 1);
      }
    }
    return outcome.seconds();
  }

  /** Rows must match, and the first {@code columns} column sums (at least one wherever values were read). */
  private static void check(ScalingPeer peer, int clients, int index, ScalingPeer.Tally got,
      ScalingPeer.Tally expected, int columns) {
    boolean ok = got.rows() == expected.rows() && got.sums().length == columns
        && Arrays.equals(got.sums(), Arrays.copyOf(expected.sums(), columns));
    if (!ok) {
      throw new IllegalStateException(peer.name() + ", client " + index + " of " + clients + ": got " + got
          + ", expected " + expected.rows() + " rows and the sums " + Arrays.toString(Arrays.copyOf(expected.sums(),
          columns)));
    }
  }

  private void table(String title, String what, List<ScalingPeer> peers, long bytes,
      Map<String, Map<Integer, List<Double>>> seconds, List<String> ceilings, double elapsed) {
    report.append(String.format(Locale.ROOT, "### %s (%.0f MB per client; %.0f s)%n%n%s. Aggregate GB/s:%n%n", title,
        bytes / 1e6, elapsed, what));
    report.append("| K | ").append(peers.stream().map(p -> p.name() + (p.ceiling() ? " (ceiling)" : ""))
        .collect(Collectors.joining(" | "))).append(" |\n");
    report.append("|---:|").append("---:|".repeat(peers.size())).append('\n');
    for (int clients : plan.clients()) {
      report.append("| ").append(clients);
      for (ScalingPeer peer : peers) {
        report.append(String.format(Locale.ROOT, " | %.2f", gigabytes(bytes, clients,
            seconds.get(peer.name()).get(clients))));
      }
      report.append(" |\n");
    }
    report.append('\n');
    List<ScalingPeer> contenders = peers.stream().filter(p -> !p.ceiling()).toList();
    for (String ceiling : ceilings) {
      report.append("Ratio to the ceiling *").append(ceiling)
          .append("*, K at once (aggregate GB/s over the ceiling's at the same K):\n\n");
      report.append("| K | ").append(contenders.stream().map(p -> p.name() + " x " + ceiling)
          .collect(Collectors.joining(" | "))).append(" |\n");
      report.append("|---:|").append("---:|".repeat(contenders.size())).append('\n');
      for (int clients : plan.clients()) {
        double reference = median(seconds.get(ceiling).get(clients));
        report.append("| ").append(clients);
        for (ScalingPeer peer : contenders) {
          report.append(String.format(Locale.ROOT, " | %.2f", reference / median(seconds.get(peer.name())
              .get(clients))));
        }
        report.append(" |\n");
      }
      report.append('\n');
    }
  }

  private static double gigabytes(long bytes, int clients, List<Double> seconds) {
    return clients * (double) bytes / median(seconds) / 1e9;
  }

  private static double median(List<Double> values) {
    return IngestBench.median(values);
  }

  /** Runs a statement in the engine's database, in this thread. */
  private static void execute(PreparedQueryEngine engine, String sql, BufferAllocator allocator) {
    try (QueryResult result = engine.execute(Peers.spec(sql, 1024), allocator)) {
      for (BatchContents batch; (batch = result.next()) != null; ) {
        batch.close();
      }
    }
  }

  @Override
  public void close() {
    together.close();
  }

  /**
   * The clients, connected before anything is timed (as an application keeps them): per server and transport, K of
   * them for reading (the requested batch size) and K for ingest (8 credits unless {@code --ingest-credits} says
   * otherwise).
   */
  private static final class Clients implements AutoCloseable {
    private final BufferAllocator memory;
    private final int count;
    private final int ingestCredits;
    private final Map<String, List<ThallusClient>> connected = new HashMap<>();

    Clients(BufferAllocator memory, int count, int ingestCredits) {
      this.memory = memory;
      this.count = count;
      this.ingestCredits = ingestCredits;
    }

    java.util.function.IntFunction<ThallusClient> reading(ThallusServer server, String transport, int batchRows) {
      return connect("read " + server.getLocation().port() + " " + transport, server, transport,
          ClientOptions.builder().batchRows(batchRows).build());
    }

    java.util.function.IntFunction<ThallusClient> ingesting(ThallusServer server, String transport) {
      return connect("ingest " + server.getLocation().port() + " " + transport, server, transport,
          ClientOptions.builder().credits(ingestCredits).build());
    }

    private java.util.function.IntFunction<ThallusClient> connect(String key, ThallusServer server, String transport,
        ClientOptions options) {
      List<ThallusClient> clients = connected.computeIfAbsent(key, k -> {
        List<ThallusClient> list = new ArrayList<>();
        for (int i = 0; i < count; i++) {
          list.add(ThallusClient.connect(memory, server.getLocation().withTransport(transport), options));
        }
        return list;
      });
      return clients::get;
    }

    @Override
    public void close() {
      connected.values().forEach(list -> list.forEach(ThallusClient::close));
    }
  }
}
