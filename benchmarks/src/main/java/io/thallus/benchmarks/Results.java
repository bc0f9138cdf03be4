package io.thallus.benchmarks;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.thallus.cli.sidebyside.PeerResult;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** {@code results.json}: every point and every peer's runs, with the derived figures next to the raw times. */
final class Results {
  private Results() {}

  static void write(Path file, Plan plan, List<String> transports, List<Point> points,
      List<JdbcBench.Driver> jdbc, double minutes) throws IOException {
    Map<String, Object> root = new LinkedHashMap<>();
    root.put("plan", plan);
    root.put("transports", transports);
    root.put("minutes", minutes);
    root.put("allChecksumsMatch", points.stream().allMatch(Point::allMatch));
    List<Object> list = new ArrayList<>();
    for (Point point : points) {
      Map<String, Object> entry = new LinkedHashMap<>();
      entry.put("experiment", point.experiment());
      entry.put("setting", point.setting());
      entry.put("table", point.table());
      entry.put("rows", point.rows());
      entry.put("columns", point.columns());
      entry.put("batchRows", point.batchRows());
      entry.put("bytes", point.bytes());
      entry.put("checksum", Long.toHexString(point.checksum()));
      List<Object> peers = new ArrayList<>();
      for (PeerResult peer : point.peers()) {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("name", peer.name());
        p.put("kind", peer.kind().name().toLowerCase(java.util.Locale.ROOT));
        p.put("checksum", peer.checksum() == null ? null : Long.toHexString(peer.checksum()));
        p.put("checksumMatches", peer.checksum() == null ? null : peer.matches());
        p.put("batches", peer.batches());
        p.put("medianSeconds", number(peer.medianSeconds()));
        p.put("bestSeconds", number(peer.bestSeconds()));
        p.put("p90Seconds", number(peer.percentile(0.9)));
        p.put("gigabytesPerSecond", number(point.gigabytesPerSecond(peer.name())));
        p.put("rowsPerSecond", number(point.rows() / peer.medianSeconds()));
        p.put("microsPerBatch", number(peer.microsPerBatch()));
        p.put("speedupOverIpc", number(point.speedup(peer.name(), "ipc")));
        p.put("speedupOverFlight", number(point.speedup(peer.name(), Fixture.FLIGHT)));
        // End to end only: the two ceilings, named (the engine's own export; DuckDB run plainly).
        p.put("speedupOverEngineExport", point.peer(Fixture.DUCKDB) == null ? null
            : number(point.speedup(peer.name(), Fixture.DUCKDB)));
        p.put("speedupOverPlainDuckDBExport", point.peer(Fixture.PLAIN_DUCKDB) == null ? null
            : number(point.speedup(peer.name(), Fixture.PLAIN_DUCKDB)));
        double gigabytes = peer.seconds().size() * point.bytes() / 1e9;
        p.put("serverCpuSecondsPerGB", peer.serverCpuSeconds() < 0 ? null : number(peer.serverCpuSeconds() / gigabytes));
        p.put("clientCpuSecondsPerGB", peer.clientCpuSeconds() < 0 ? null : number(peer.clientCpuSeconds() / gigabytes));
        p.put("processCpuSecondsPerGB", number(peer.processCpuSeconds() / gigabytes));
        p.put("seconds", peer.seconds());
        peers.add(p);
      }
      entry.put("peers", peers);
      list.add(entry);
    }
    root.put("points", list);
    List<Object> drivers = new ArrayList<>();
    for (JdbcBench.Driver driver : jdbc) {
      Map<String, Object> d = new LinkedHashMap<>();
      d.put("name", driver.name());
      d.put("rows", plan.jdbcRows());
      d.put("valuesMatch", driver.matches());
      d.put("oneRowQueryMedianMicros", number(driver.queryMicros(0.5)));
      d.put("oneRowQueryP90Micros", number(driver.queryMicros(0.9)));
      d.put("readMedianMillis", number(driver.readMillis()));
      d.put("oneRowQueryNanos", driver.queryNanos());
      d.put("readNanos", driver.readNanos());
      drivers.add(d);
    }
    root.put("jdbc", drivers);
    new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(file.toFile(), root);
  }

  /** JSON has no NaN or infinity: those become null. */
  private static Double number(double value) {
    return Double.isFinite(value) ? value : null;
  }
}
