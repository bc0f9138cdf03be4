package io.thallus.benchmarks;

import io.thallus.cli.sidebyside.Peer;
import io.thallus.cli.sidebyside.PeerResult;
import java.util.List;
import java.util.Locale;

/** {@code summary.md}: the headline tables and DESIGN §6's targets, met or missed, with the numbers of this run. */
final class Summary {
  private static final List<String> ZERO_COPY = List.of("tcp", "shm", "cma", "rdma");

  private Summary() {}

  static String of(List<Point> points, List<JdbcBench.Driver> jdbc, List<String> transports, Plan plan,
      double minutes) {
    StringBuilder out = new StringBuilder();
    Point headline = find(points, "headline", Point.TRANSPORT_ONLY, plan.headlineRows());
    Point endToEnd = find(points, "rows", Point.END_TO_END, plan.headlineRows());
    Point oneRow = find(points, "one-row query", Point.END_TO_END, 1);
    line(out, "Plan `%s`, %.1f minutes; every peer's data %s.", plan.name(), minutes,
        points.stream().allMatch(Point::allMatch) ? "matched the expected checksum" : "DID NOT all match");
    line(out, "");
    line(out, "Transport only, %,d rows x 8 BIGINT (%.0f MB) in %,d-row batches prepared in server memory, %d timed "
        + "pulls each, interleaved, medians:", headline.rows(), headline.bytes() / 1e6, headline.batchRows(),
        headline.peers().get(0).seconds().size());
    line(out, "");
    line(out, "| peer | median s | GB/s | M rows/s | vs Flight | vs ipc | server CPU s/GB | client CPU s/GB "
        + "| process CPU s/GB |");
    line(out, "|---|---|---|---|---|---|---|---|---|");
    for (PeerResult peer : headline.peers()) {
      line(out, "| %s | %.3f | %.2f | %.1f | %.2fx | %.2fx | %s | %s | %s |", label(peer), peer.medianSeconds(),
          headline.gigabytesPerSecond(peer.name()), headline.rows() / peer.medianSeconds() / 1e6,
          headline.speedup(peer.name(), Fixture.FLIGHT), headline.speedup(peer.name(), "ipc"),
          cpu(peer, peer.serverCpuSeconds(), headline), cpu(peer, peer.clientCpuSeconds(), headline),
          cpu(peer, peer.processCpuSeconds(), headline));
    }
    line(out, "");
    line(out, "End to end, `SELECT * FROM big` (%,d rows x 8 BIGINT in DuckDB), %,d-row batches, medians:",
        endToEnd.rows(), endToEnd.batchRows());
    line(out, "");
    line(out, "| peer | median s | GB/s | x engine export (ceiling) | x plain DuckDB export (ceiling) | vs Flight "
        + "| vs ipc | process CPU s/GB |");
    line(out, "|---|---|---|---|---|---|---|---|");
    for (PeerResult peer : endToEnd.peers()) {
      line(out, "| %s | %.3f | %.2f | %.2fx | %s | %.2fx | %.2fx | %s |", label(peer), peer.medianSeconds(),
          endToEnd.gigabytesPerSecond(peer.name()), endToEnd.speedup(peer.name(), Fixture.DUCKDB),
          ratio(endToEnd, peer.name(), Fixture.PLAIN_DUCKDB), endToEnd.speedup(peer.name(), Fixture.FLIGHT),
          endToEnd.speedup(peer.name(), "ipc"), cpu(peer, peer.processCpuSeconds(), endToEnd));
    }
    line(out, "");
    line(out, "Two ceilings, both DuckDB in this process with no transport: *engine export* is the server's own engine "
        + "(DuckDB as the server runs it: streaming results, a 1 MiB streaming buffer) read in process; *plain DuckDB "
        + "export* is DuckDB's JDBC driver with default settings, `arrowExportStream` on a connection of its own, over "
        + "a copy of the same tables.");
    line(out, "");
    line(out, "Small results (latency; median and p90 of %d queries each, microseconds):", oneRow.peers().get(0)
        .seconds().size());
    line(out, "");
    line(out, "| peer | one-row query (end to end) | p90 | 1 row, transport only | 1,000 rows, transport only |");
    line(out, "|---|---|---|---|---|");
    Point tinyRow = find(points, "rows", Point.TRANSPORT_ONLY, 1);
    Point thousand = find(points, "rows", Point.TRANSPORT_ONLY, 1_000);
    for (PeerResult peer : oneRow.peers()) {
      line(out, "| %s | %.0f | %.0f | %s | %s |", label(peer), peer.medianSeconds() * 1e6, peer.percentile(0.9) * 1e6,
          micros(tinyRow, peer.name()), micros(thousand, peer.name()));
    }
    line(out, "");
    line(out, "JDBC drivers (%d one-row queries and %d full reads each, interleaved):", plan.jdbcQueries(),
        plan.jdbcReads());
    line(out, "");
    out.append(JdbcBench.table(jdbc, plan.jdbcRows()));
    line(out, "");
    for (String setting : List.of(Point.TRANSPORT_ONLY, Point.END_TO_END)) {
      sweeps(out, points, setting);
    }
    line(out, "DESIGN §6 targets, from this run:");
    line(out, "");
    double shmFlight = headline.speedup("shm", Fixture.FLIGHT);
    target(out, "shm >= 5x Arrow Flight Java (transport only)", shmFlight >= 5, "%.2fx", shmFlight);
    double tcpFlight = headline.speedup("tcp", Fixture.FLIGHT);
    target(out, "tcp >= 3x Arrow Flight Java", tcpFlight >= 3, "%.2fx", tcpFlight);
    double tcpRaw = headline.speedup("tcp", "raw socket");
    target(out, "tcp >= 80% of a raw socket gathering write", tcpRaw >= 0.8, "%.0f%%", 100 * tcpRaw);
    for (String transport : transports) {
      if (ZERO_COPY.contains(transport)) {
        double large = headline.speedup(transport, "ipc");
        target(out, transport + " >= 5.5x ipc on large results", large >= 5.5, "%.2fx", large);
        double small = Math.min(tinyRow.speedup(transport, "ipc"), thousand.speedup(transport, "ipc"));
        target(out, transport + " never slower than ipc on tiny results (1 and 1,000 rows, the lower of the two)",
            small >= 1, "%.2fx", small);
        double duck = endToEnd.median(transport) / endToEnd.median(Fixture.DUCKDB);
        target(out, transport + " end to end within 10% of the engine's in-process export", duck <= 1.10,
            "%.2fx its time", duck);
      }
    }
    for (String sameHost : List.of("shm", "cma")) {
      if (transports.contains(sameHost)) {
        line(out, "- (no target) %s reaches %.0f%% of a single-thread memcpy of the same bytes", sameHost,
            100 * headline.speedup(sameHost, "memcpy"));
      }
    }
    line(out, "- rdma >= 90%% of `ib_read_bw`: not measured here (needs the Soft-RoCE guest: "
        + "`harness/transport-bench.sh`).");
    JdbcBench.Driver flightSql = jdbc.stream().filter(d -> d.name().equals(JdbcBench.FLIGHT_SQL)).findFirst()
        .orElseThrow();
    for (JdbcBench.Driver driver : jdbc) {
      if (driver.name().startsWith("thallus")) {
        target(out, "one-row query through the JDBC driver (" + driver.name() + ") below Arrow Flight SQL's JDBC "
            + "driver", driver.queryMicros(0.5) < flightSql.queryMicros(0.5), "%s",
            String.format(Locale.ROOT, "%.0f vs %.0f µs", driver.queryMicros(0.5), flightSql.queryMicros(0.5)));
      }
    }
    latencyAndOverlapTargets(out, points, headline, endToEnd, oneRow, jdbc, transports);
    return out.toString();
  }

  /**
   * Issue 23's targets: small results near a socket's round trip (the raw socket peer is one request and the
   * result's bytes back on a kept connection), large ones at DuckDB's pace.
   */
  private static void latencyAndOverlapTargets(StringBuilder out, List<Point> points, Point headline,
      Point endToEnd, Point oneRow, List<JdbcBench.Driver> jdbc, List<String> transports) {
    line(out, "");
    line(out, "Latency floor and overlap (issue 23) targets, from this run (ratios of medians):");
    line(out, "");
    for (long rows : List.of(1L, 1_000L)) {
      Point tiny = find(points, "rows", Point.TRANSPORT_ONLY, rows);
      double roundTrip = tiny.median("raw socket");
      for (String transport : transports) {
        double times = tiny.median(transport) / roundTrip;
        target(out, String.format(Locale.ROOT, "%s, %,d row%s transport only, <= 2x the raw socket's round trip",
            transport, rows, rows == 1 ? "" : "s"), times <= 2, "%s", String.format(Locale.ROOT,
            "%.1fx: %.0f vs %.0f µs", times, tiny.median(transport) * 1e6, roundTrip * 1e6));
      }
    }
    for (String transport : transports) {
      double times = oneRow.median(transport) / oneRow.median(Fixture.DUCKDB);
      target(out, transport + ", one-row point query end to end, <= 1.2x the engine in process", times <= 1.2, "%s",
          String.format(Locale.ROOT, "%.2fx: %.0f vs %.0f µs", times, oneRow.median(transport) * 1e6,
              oneRow.median(Fixture.DUCKDB) * 1e6));
    }
    JdbcBench.Driver duckdbJdbc = jdbc.stream().filter(d -> d.name().equals(JdbcBench.DUCKDB)).findFirst()
        .orElseThrow();
    for (JdbcBench.Driver driver : jdbc) {
      if (driver.name().startsWith("thallus")) {
        double times = driver.queryMicros(0.5) / duckdbJdbc.queryMicros(0.5);
        target(out, "one-row query through the JDBC driver (" + driver.name() + "), <= 1.3x DuckDB's JDBC in "
            + "process", times <= 1.3, "%s", String.format(Locale.ROOT, "%.2fx: %.0f vs %.0f µs", times,
            driver.queryMicros(0.5), duckdbJdbc.queryMicros(0.5)));
      }
    }
    if (transports.contains("shm")) {
      double shm = endToEnd.speedup("shm", Fixture.DUCKDB);
      target(out, "shm end to end (10M x 8 BIGINT), >= 0.95x the engine's in-process export", shm >= 0.95, "%.2fx",
          shm);
    }
    double tcp = endToEnd.speedup("tcp", Fixture.DUCKDB);
    target(out, "tcp end to end (10M x 8 BIGINT), >= 0.8x the engine's in-process export", tcp >= 0.8, "%.2fx", tcp);
    double tcpRaw = headline.speedup("tcp", "raw socket");
    target(out, "tcp transport only, >= 90% of the raw socket", tcpRaw >= 0.9, "%.0f%%", 100 * tcpRaw);
    line(out, "");
    line(out, "Many cores (issue 36) targets that one client can show here (ratios of medians; the K-client ones are "
        + "in the scaling benchmark's scaling.md):");
    line(out, "");
    for (String transport : List.of("shm", "tcp", "cma")) {
      if (transports.contains(transport)) {
        double plain = endToEnd.speedup(transport, Fixture.PLAIN_DUCKDB);
        target(out, transport + " end to end (10M x 8 BIGINT), >= 0.95x plain DuckDB's in-process export",
            plain >= 0.95, "%.2fx", plain);
        double flight = endToEnd.speedup(transport, Fixture.FLIGHT);
        target(out, transport + " end to end (10M x 8 BIGINT), >= 1.3x Arrow Flight DoGet", flight >= 1.3, "%.2fx",
            flight);
      }
    }
  }

  /** Every point of one setting: GB/s per peer, or microseconds per pull for results of at most 1,000 rows. */
  private static void sweeps(StringBuilder out, List<Point> points, String setting) {
    List<Point> sweep = points.stream().filter(p -> p.setting().equals(setting) && !p.experiment().equals("headline"))
        .toList();
    List<String> names = sweep.get(0).peers().stream().map(PeerResult::name).toList();
    line(out, "All %s points: GB/s (median), or µs per pull in *italics* for results of at most 1,000 rows; "
        + "µs per batch in the batch-rows rows:", setting);
    line(out, "");
    line(out, "| experiment | table | rows | columns | batch rows | %s |", names.stream()
        .map(name -> name.equals(Fixture.DUCKDB) ? "engine export (ceiling)"
            : name.equals(Fixture.PLAIN_DUCKDB) ? "plain DuckDB export (ceiling)" : name)
        .collect(java.util.stream.Collectors.joining(" | ")));
    line(out, "|---|---|---|---|---|%s", "---|".repeat(names.size()));
    for (Point point : sweep) {
      StringBuilder cells = new StringBuilder();
      for (String name : names) {
        PeerResult peer = point.peer(name);
        String cell = point.rows() <= 1_000 ? String.format(Locale.ROOT, "*%.0f*", point.median(name) * 1e6)
            : String.format(Locale.ROOT, "%.2f", point.gigabytesPerSecond(name));
        if (point.experiment().equals("batch rows")) {
          cell += String.format(Locale.ROOT, " (%.0f µs)", peer.microsPerBatch());
        }
        cells.append(" | ").append(cell);
      }
      line(out, "| %s | %s | %,d | %d | %,d%s |", point.experiment(), point.table(), point.rows(), point.columns(),
          point.batchRows(), cells);
    }
    line(out, "");
  }

  private static String label(PeerResult peer) {
    return switch (peer.name()) {
      case "raw socket" -> "raw socket gathering write (TCP ceiling)";
      case "memcpy" -> "single-thread memcpy (memory ceiling)";
      case Fixture.DUCKDB -> "engine export: the server's engine in process (ceiling)";
      case Fixture.PLAIN_DUCKDB -> "plain DuckDB export: JDBC arrowExportStream, defaults (ceiling)";
      case Fixture.FLIGHT -> "Arrow Flight Java DoGet";
      case "ipc" -> "ipc (baseline)";
      default -> peer.name();
    };
  }

  /** {@code name}'s speedup over {@code baseline} at {@code point}, or empty where the baseline was not run. */
  private static String ratio(Point point, String name, String baseline) {
    return point.peer(baseline) == null ? "" : String.format(Locale.ROOT, "%.2fx", point.speedup(name, baseline));
  }

  private static String micros(Point point, String name) {
    double median = point.median(name);
    return Double.isNaN(median) ? "" : String.format(Locale.ROOT, "%.0f", median * 1e6);
  }

  private static String cpu(PeerResult peer, double seconds, Point point) {
    if (seconds < 0 || peer.kind() == Peer.Kind.CEILING && peer != point.peer(Fixture.DUCKDB)) {
      return "";
    }
    return String.format(Locale.ROOT, "%.3f", seconds / (peer.seconds().size() * point.bytes() / 1e9));
  }

  private static void target(StringBuilder out, String what, boolean met, String format, Object value) {
    line(out, "- %s: %s (%s)", what, met ? "met" : "missed", String.format(Locale.ROOT, format, value));
  }

  static Point find(List<Point> points, String experiment, String setting, long rows) {
    return points.stream().filter(p -> p.experiment().equals(experiment) && p.setting().equals(setting)
        && p.rows() == rows).findFirst().orElseThrow(() -> new IllegalStateException("no point " + experiment
        + " " + setting + " " + rows));
  }

  private static void line(StringBuilder out, String format, Object... args) {
    out.append(String.format(Locale.ROOT, format, args)).append('\n');
  }
}
