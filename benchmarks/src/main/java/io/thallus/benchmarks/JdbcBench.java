package io.thallus.benchmarks;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * JDBC drivers side by side in one JVM and one run: Thallus's (same-host default, tcp, ipc), Arrow Flight SQL's
 * JDBC driver against a Flight SQL server over the same DuckDB, and DuckDB's own driver in-process (the floor, not
 * a peer: it crosses no process boundary). Measures the latency of a one-row query (a point filter) and the time
 * to read {@code rows} x 8 BIGINT through {@code ResultSet.next()} and {@code getLong}, checking every read's
 * values. {@code harness/jdbc-bench.sh} runs {@link #main} alone; {@link Suite} runs it as one experiment.
 */
public final class JdbcBench {
  static final String FLIGHT_SQL = "Arrow Flight SQL JDBC";
  static final String DUCKDB = "DuckDB JDBC in-process";
  private static final String TABLE = "CREATE TABLE jdbc_t AS SELECT i AS c0, i * 3 AS c1, i % 1000 AS c2, -i AS c3, "
      + "i * i % 100003 AS c4, xor(i, 12345) AS c5, i // 7 AS c6, 42 + i AS c7 FROM range({rows}) r(i)";
  private static final String ONE_ROW = "SELECT c0, c1, c2, c3, c4, c5, c6, c7 FROM jdbc_t WHERE c0 = 4242";

  /** One driver's figures: nanoseconds per one-row query and per full read, and whether its reads agreed. */
  record Driver(String name, List<Long> queryNanos, List<Long> readNanos, boolean matches) {
    double queryMicros(double fraction) {
      return percentile(queryNanos, fraction) / 1e3;
    }

    double readMillis() {
      return percentile(readNanos, 0.5) / 1e6;
    }
  }

  private JdbcBench() {}

  public static void main(String[] args) throws Exception {
    int rows = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
    int reads = args.length > 1 ? Integer.parseInt(args[1]) : 7;
    int queries = args.length > 2 ? Integer.parseInt(args[2]) : 500;
    try (Fixture fixture = new Fixture()) {
      System.out.print(table(run(fixture, rows, reads, queries), rows));
    }
  }

  static List<Driver> run(Fixture fixture, int rows, int reads, int queries) throws SQLException {
    fixture.execute(TABLE.replace("{rows}", Integer.toString(rows)));
    String thallus = "jdbc:thallus://127.0.0.1:" + fixture.thallusPort();
    Map<String, Connection> connections = new LinkedHashMap<>();
    try {
      connections.put("thallus (same-host default)", DriverManager.getConnection(thallus));
      connections.put("thallus tcp", DriverManager.getConnection(thallus + "?transport=tcp"));
      connections.put("thallus ipc", DriverManager.getConnection(thallus + "?transport=ipc"));
      connections.put(FLIGHT_SQL, DriverManager.getConnection(fixture.flightSql().jdbcUrl()));
      Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
      connections.put(DUCKDB, duckdb);
      try (Statement create = duckdb.createStatement()) {
        create.execute(TABLE.replace("{rows}", Integer.toString(rows)));
      }
      Map<String, List<Long>> latencies = new LinkedHashMap<>();
      Map<String, List<Long>> readTimes = new LinkedHashMap<>();
      Map<String, Boolean> matches = new LinkedHashMap<>();
      long expected = 0;
      for (String name : connections.keySet()) {
        latencies.put(name, new ArrayList<>());
        readTimes.put(name, new ArrayList<>());
        matches.put(name, true);
      }
      // Warm up every driver (and check the values once) before anything is timed: ten untimed queries per timed
      // one, interleaved, so the JIT has compiled each driver's path (the first thousand take 2-3x as long).
      for (Map.Entry<String, Connection> entry : connections.entrySet()) {
        long checksum = readAll(entry.getValue());
        expected = entry.getKey().equals(DUCKDB) ? checksum : expected;
      }
      for (int i = 0; i < Math.max(20, 10 * queries); i++) {
        for (Connection connection : connections.values()) {
          oneRow(connection);
        }
      }
      // Interleaved, so every driver sees the same machine noise.
      for (int query = 0; query < queries; query++) {
        for (Map.Entry<String, Connection> entry : connections.entrySet()) {
          long start = System.nanoTime();
          oneRow(entry.getValue());
          latencies.get(entry.getKey()).add(System.nanoTime() - start);
        }
      }
      for (int read = 0; read < reads; read++) {
        for (Map.Entry<String, Connection> entry : connections.entrySet()) {
          long start = System.nanoTime();
          long checksum = readAll(entry.getValue());
          readTimes.get(entry.getKey()).add(System.nanoTime() - start);
          matches.put(entry.getKey(), matches.get(entry.getKey()) && checksum == expected);
        }
      }
      List<Driver> drivers = new ArrayList<>();
      for (String name : connections.keySet()) {
        drivers.add(new Driver(name, latencies.get(name), readTimes.get(name), matches.get(name)));
      }
      return drivers;
    } finally {
      for (Connection connection : connections.values()) {
        connection.close();
      }
      fixture.execute("DROP TABLE jdbc_t");
    }
  }

  static String table(List<Driver> drivers, int rows) {
    Driver duckdb = drivers.stream().filter(d -> d.name().equals(DUCKDB)).findFirst().orElseThrow();
    Driver flightSql = drivers.stream().filter(d -> d.name().equals(FLIGHT_SQL)).findFirst().orElseThrow();
    StringBuilder out = new StringBuilder();
    out.append(String.format(Locale.ROOT, "| driver | one-row query, median µs | p90 µs | vs Flight SQL JDBC "
        + "| %,d x 8 read, median ms | M rows/s | read vs DuckDB JDBC | values |%n", rows));
    out.append("|---|---|---|---|---|---|---|---|\n");
    for (Driver driver : drivers) {
      out.append(String.format(Locale.ROOT, "| %s | %.0f | %.0f | %.2fx | %.0f | %.1f | %.2fx | %s |%n",
          driver.name(), driver.queryMicros(0.5), driver.queryMicros(0.9),
          flightSql.queryMicros(0.5) / driver.queryMicros(0.5), driver.readMillis(),
          rows / driver.readMillis() / 1e3, duckdb.readMillis() / driver.readMillis(),
          driver.matches() ? "match" : "MISMATCH"));
    }
    return out.toString();
  }

  private static void oneRow(Connection connection) throws SQLException {
    try (Statement statement = connection.createStatement();
         ResultSet result = statement.executeQuery(ONE_ROW)) {
      if (!result.next() || result.getLong(1) != 4242) {
        throw new IllegalStateException("the one-row query returned no row 4242");
      }
    }
  }

  /** Reads every value through getLong; returns an order-sensitive checksum. */
  private static long readAll(Connection connection) throws SQLException {
    long checksum = 0;
    try (Statement statement = connection.createStatement();
         ResultSet result = statement.executeQuery("SELECT * FROM jdbc_t ORDER BY c0")) {
      while (result.next()) {
        for (int column = 1; column <= 8; column++) {
          checksum = checksum * 31 + result.getLong(column);
        }
      }
    }
    return checksum;
  }

  /** The value at {@code fraction} of the sorted values (nearest rank). */
  static double percentile(List<Long> values, double fraction) {
    long[] sorted = values.stream().mapToLong(Long::longValue).toArray();
    Arrays.sort(sorted);
    return sorted.length == 0 ? Double.NaN
        : sorted[Math.min(sorted.length - 1, (int) Math.floor(fraction * (sorted.length - 1) + 0.5))];
  }
}
