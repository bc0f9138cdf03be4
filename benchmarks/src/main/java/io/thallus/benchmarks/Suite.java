package io.thallus.benchmarks;

import io.thallus.cli.sidebyside.Comparison;
import io.thallus.cli.sidebyside.Peer;
import io.thallus.cli.sidebyside.PeerResult;
import io.thallus.cli.sidebyside.Peers;
import io.thallus.cli.sidebyside.Pull;
import io.thallus.spi.BatchContents;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * The paper's experiments, every peer side by side in one JVM and one run: transport only (results prepared in
 * server memory first) and end to end (SQL in DuckDB to batches in the client), over result size, column count,
 * batch size and table kind, plus the one-row query and the JDBC drivers ({@link JdbcBench}). Writes {@code results.json}, {@code machine.txt},
 * {@code summary.md} and the plots into the output folder. A plain main rather than JMH: each point compares seven
 * peers on the same data, checks their checksums and interleaves their runs, which JMH's one-benchmark-at-a-time
 * model cannot; the JMH classes cover the headline pulls for those who want JMH's statistics.
 *
 * <pre>java ... io.thallus.benchmarks.Suite [--plan full|tiny] [--out folder]</pre>
 */
public final class Suite {
  private static final int WIDE_COLUMNS = 16;

  private final Plan plan;
  private final Fixture fixture;
  private final PrintStream log;
  private final List<Point> points = new ArrayList<>();
  private List<JdbcBench.Driver> jdbc = List.of();
  private final Map<String, Point> measured = new LinkedHashMap<>();

  private Suite(Plan plan, Fixture fixture, PrintStream log) {
    this.plan = plan;
    this.fixture = fixture;
    this.log = log;
  }

  public static void main(String[] args) throws Exception {
    String planName = "full";
    Path out = null;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--plan" -> planName = args[++i];
        case "--out" -> out = Path.of(args[++i]);
        default -> throw new IllegalArgumentException("usage: Suite [--plan full|tiny] [--out folder]");
      }
    }
    if (out == null) {
      out = Path.of("benchmarks", "results", LocalDate.now(ZoneOffset.UTC).toString());
    }
    boolean ok = run(Plan.named(planName), out, System.out);
    System.exit(ok ? 0 : 1);
  }

  /** Runs the plan and writes its outputs; returns whether every peer delivered the expected data. */
  static boolean run(Plan plan, Path out, PrintStream log) throws Exception {
    Files.createDirectories(out);
    System.setProperty("java.awt.headless", "true");
    long start = System.nanoTime();
    try (Fixture fixture = new Fixture()) {
      Suite suite = new Suite(plan, fixture, log);
      log.printf(Locale.ROOT, "Thallus benchmark suite, plan %s: transports %s, Arrow Flight, ceilings; out %s%n",
          plan.name(), fixture.transports(), out);
      Files.writeString(out.resolve("machine.txt"), Machine.describe(fixture.duckdbVersion()));
      suite.createTables();
      suite.measureAll();
      log.println("JDBC drivers ...");
      suite.jdbc = JdbcBench.run(fixture, plan.jdbcRows(), plan.jdbcReads(), plan.jdbcQueries());
      double minutes = (System.nanoTime() - start) / 60e9;
      Results.write(out.resolve("results.json"), plan, fixture.transports(), suite.points, suite.jdbc, minutes);
      String summary = Summary.of(suite.points, suite.jdbc, fixture.transports(), plan, minutes);
      Files.writeString(out.resolve("summary.md"), summary);
      Plots.write(out, suite.points, fixture.transports());
      log.println();
      log.println(summary);
      return suite.points.stream().allMatch(Point::allMatch)
          && suite.jdbc.stream().allMatch(JdbcBench.Driver::matches);
    }
  }

  private static String bigintColumns(int count) {
    return IntStream.range(0, count).mapToObj(c -> "c" + c).collect(Collectors.joining(", "));
  }

  private void createTables() {
    log.println("creating tables in the server's DuckDB and in a plain one ...");
    // Distinct values per column, so a transport that swapped or repeated a column would fail its checksum.
    fixture.executeEverywhere("CREATE TABLE big AS SELECT " + IntStream.range(0, 8)
        .mapToObj(c -> "i * " + (c + 1) + " AS c" + c).collect(Collectors.joining(", ")) + " FROM range(" + plan.headlineRows() + ") t(i)");
    fixture.executeEverywhere("CREATE TABLE wide AS SELECT " + IntStream.range(0, WIDE_COLUMNS)
        .mapToObj(c -> "i * " + (c + 1) + " + " + c + " AS c" + c).collect(Collectors.joining(", "))
        + " FROM range(" + plan.sweepRows() + ") t(i)");
    // The mixed table: the same row count and column count as the BIGINT one, with strings of varying length.
    fixture.executeEverywhere("CREATE TABLE mixed AS SELECT i AS c0, i * 3 AS c1, (i % 1000)::INTEGER AS c2, "
        + "i * 0.25 AS c3, 'customer ' || i AS c4, CASE WHEN i % 7 = 0 THEN NULL ELSE repeat(chr((97 + i % 26)::INTEGER), "
        + "(i % 24)::INTEGER) END AS c5, -i AS c6, (i % 2 = 0) AS c7 FROM range(" + plan.sweepRows() + ") t(i)");
  }

  private void measureAll() {
    long big = plan.headlineRows();
    // Headline first, while the machine is freshest: 10M x 8 BIGINT, 64K rows, transport only.
    measure("headline", Point.TRANSPORT_ONLY, "bigint", "SELECT * FROM big", big, 8, plan.batchRows(),
        plan.headlineRuns());
    List<Long> sizes = new ArrayList<>(plan.sizes());
    sizes.add(big);
    for (String setting : List.of(Point.TRANSPORT_ONLY, Point.END_TO_END)) {
      for (long rows : sizes) {
        String sql = rows == big ? "SELECT * FROM big" : "SELECT * FROM big LIMIT " + rows;
        measure("rows", setting, "bigint", sql, rows, 8, plan.batchRows(), runsFor(rows));
      }
      for (int columns : plan.columns()) {
        measure("columns", setting, "bigint", "SELECT " + bigintColumns(columns) + " FROM wide", plan.sweepRows(),
            columns, plan.batchRows(), plan.runs());
      }
      for (int batchRows : plan.batchSizes()) {
        measure("batch rows", setting, "bigint", "SELECT * FROM big LIMIT " + plan.sweepRows(), plan.sweepRows(), 8,
            batchRows, plan.runs());
      }
      for (String table : List.of("bigint", "mixed")) {
        String sql = table.equals("mixed") ? "SELECT * FROM mixed" : "SELECT * FROM big LIMIT " + plan.sweepRows();
        measure("table", setting, table, sql, plan.sweepRows(), 8, plan.batchRows(), plan.runs());
      }
    }
    measure("one-row query", Point.END_TO_END, "bigint", "SELECT * FROM big WHERE c0 = 4242", 1, 8, plan.batchRows(),
        2 * plan.latencyRuns());
  }

  /** Untimed pulls before a latency point's timed ones: ten times as many, so the JIT has compiled the path. */
  private static int warmups(long rows, int runs) {
    return rows <= 1_000 ? 10 * runs : 0;
  }

  private int runsFor(long rows) {
    return rows <= 1_000 ? plan.latencyRuns() : rows >= plan.headlineRows() ? plan.headlineRuns() : plan.runs();
  }

  /** Measures one point (or reuses it when another experiment measured the same query and setting already). */
  private void measure(String experiment, String setting, String table, String sql, long rows, int columns,
      int batchRows, int runs) {
    String key = setting + "|" + sql + "|" + batchRows;
    Point done = measured.get(key);
    if (done != null) {
      points.add(new Point(experiment, setting, table, rows, columns, batchRows, done.bytes(), done.checksum(),
          done.peers()));
      return;
    }
    long start = System.nanoTime();
    PrintStream progress = System.console() != null && rows >= 1_000_000 ? System.err : null;
    Point point;
    if (setting.equals(Point.TRANSPORT_ONLY)) {
      List<BatchContents> prepared = fixture.prepare(sql, batchRows);
      try {
        long bytes = prepared.stream().mapToLong(BatchContents::bufferBytes).sum();
        // The prepared batches read in this process: what every peer must deliver.
        long expected = fixture.inProcess(sql, batchRows).pull(true, null).checksum();
        List<Peer> peers = new ArrayList<>();
        for (String transport : fixture.transports()) {
          peers.add(fixture.thallus(transport, sql, batchRows));
        }
        peers.add(fixture.flight(sql, batchRows));
        try (Peer raw = Peers.rawSocket(prepared);
             Peer memcpy = Peers.memcpy(prepared)) {
          peers.add(raw);
          peers.add(memcpy);
          point = new Point(experiment, setting, table, rows, columns, batchRows, bytes, expected,
              Comparison.run(peers, runs, warmups(rows, runs), expected, progress));
        }
      } finally {
        fixture.forget(sql, batchRows);
      }
    } else {
      // A different text from the prepared one: the server runs this in DuckDB on every pull.
      String live = "/* end to end */ " + sql;
      Peer duckdb = fixture.inProcess(live, batchRows);
      Pull reference = duckdb.pull(true, null);
      List<Peer> peers = new ArrayList<>();
      for (String transport : fixture.transports()) {
        peers.add(fixture.thallus(transport, live, batchRows));
      }
      peers.add(fixture.flight(live, batchRows));
      peers.add(duckdb);
      // DuckDB run plainly next to the engine's own export: every end-to-end ratio names which of the two it is to.
      peers.add(fixture.plainDuckDB(live, batchRows));
      point = new Point(experiment, setting, table, rows, columns, batchRows, reference.bytes(), reference.checksum(),
          Comparison.run(peers, runs, warmups(rows, runs), reference.checksum(), progress));
    }
    measured.put(key, point);
    points.add(point);
    log.printf(Locale.ROOT, "%-13s %-14s %-6s %,11d rows x %2d, %,9d-row batches: %s%s (%.1f s)%n", experiment,
        setting, table, rows, columns, batchRows, point.peers().stream()
            .map(p -> String.format(Locale.ROOT, "%s %.2f GB/s", p.name(), point.gigabytesPerSecond(p.name())))
            .collect(Collectors.joining(", ")),
        point.allMatch() ? "" : "  CHECKSUM MISMATCH: " + point.peers().stream().filter(p -> !p.matches())
            .map(PeerResult::name).toList(), (System.nanoTime() - start) / 1e9);
  }
}
