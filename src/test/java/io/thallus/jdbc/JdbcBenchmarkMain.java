package io.thallus.jdbc;

import io.thallus.Location;
import io.thallus.ThallusServer;
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
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * The JDBC driver's figures, side by side in one run with DuckDB's own JDBC driver in-process: the median latency
 * of a one-row query, and the time to read 1M rows x 8 BIGINT through {@code ResultSet.next()} and
 * {@code getLong}. Run by {@code harness/jdbc-bench.sh}; not a test.
 */
public final class JdbcBenchmarkMain {
  private static final String TABLE = "CREATE TABLE t AS SELECT i AS c0, i * 3 AS c1, i % 1000 AS c2, -i AS c3, "
      + "i * i % 100003 AS c4, xor(i, 12345) AS c5, i // 7 AS c6, 42 + i AS c7 FROM range({rows}) r(i)";

  private JdbcBenchmarkMain() {}

  public static void main(String[] args) throws Exception {
    int rows = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
    int runs = args.length > 1 ? Integer.parseInt(args[1]) : 7;
    int pings = args.length > 2 ? Integer.parseInt(args[2]) : 500;
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0)).build().start();
         Connection duckdb = DriverManager.getConnection("jdbc:duckdb:")) {
      String url = "jdbc:thallus://127.0.0.1:" + server.getLocation().port();
      Map<String, Connection> connections = new LinkedHashMap<>();
      connections.put("thallus (same-host default)", DriverManager.getConnection(url));
      connections.put("thallus tcp", DriverManager.getConnection(url + "?transport=tcp"));
      connections.put("thallus ipc", DriverManager.getConnection(url + "?transport=ipc"));
      connections.put("DuckDB JDBC in-process", duckdb);
      try (Statement create = connections.get("thallus tcp").createStatement()) {
        create.executeUpdate(TABLE.replace("{rows}", Integer.toString(rows)));
      }
      try (Statement create = duckdb.createStatement()) {
        create.execute(TABLE.replace("{rows}", Integer.toString(rows)));
      }
      System.out.printf(Locale.ROOT, "%d rows x 8 BIGINT, %d timed reads each, %d one-row queries each, "
          + "interleaved; medians%n%n", rows, runs, pings);

      Map<String, List<Long>> latencies = new LinkedHashMap<>();
      Map<String, List<Long>> reads = new LinkedHashMap<>();
      Map<String, Long> checksums = new LinkedHashMap<>();
      connections.keySet().forEach(name -> {
        latencies.put(name, new ArrayList<>());
        reads.put(name, new ArrayList<>());
      });
      for (int warm = 0; warm < 2; warm++) {
        for (Connection connection : connections.values()) {
          readAll(connection);
          for (int i = 0; i < 50; i++) {
            oneRow(connection);
          }
        }
      }
      for (int ping = 0; ping < pings; ping++) {
        for (Map.Entry<String, Connection> entry : connections.entrySet()) {
          long start = System.nanoTime();
          oneRow(entry.getValue());
          latencies.get(entry.getKey()).add(System.nanoTime() - start);
        }
      }
      for (int run = 0; run < runs; run++) {
        for (Map.Entry<String, Connection> entry : connections.entrySet()) {
          long start = System.nanoTime();
          long checksum = readAll(entry.getValue());
          reads.get(entry.getKey()).add(System.nanoTime() - start);
          Long previous = checksums.putIfAbsent("all", checksum);
          if (previous != null && previous != checksum) {
            throw new AssertionError(entry.getKey() + " read checksum " + checksum + ", others " + previous);
          }
        }
      }
      long duckRead = median(reads.get("DuckDB JDBC in-process"));
      long duckPing = median(latencies.get("DuckDB JDBC in-process"));
      System.out.println("| driver | one-row query, median µs | p90 µs | 1M x 8 read, median ms | M rows/s "
          + "| read vs DuckDB JDBC |");
      System.out.println("|---|---|---|---|---|---|");
      for (String name : connections.keySet()) {
        long read = median(reads.get(name));
        System.out.printf(Locale.ROOT, "| %s | %.0f | %.0f | %.0f | %.1f | %.2fx |%n", name,
            median(latencies.get(name)) / 1e3, percentile(latencies.get(name), 0.9) / 1e3, read / 1e6,
            rows / (read / 1e9) / 1e6, (double) duckRead / read);
      }
      System.out.printf(Locale.ROOT, "%nOne-row latency vs DuckDB in-process: thallus default %.1fx, tcp %.1fx "
          + "(higher is slower)%n", median(latencies.get("thallus (same-host default)")) / (double) duckPing,
          median(latencies.get("thallus tcp")) / (double) duckPing);
      System.out.println("Every read produced the same checksum: " + checksums.get("all"));
      for (Map.Entry<String, Connection> entry : connections.entrySet()) {
        if (entry.getValue() != duckdb) {
          entry.getValue().close();
        }
      }
    }
  }

  private static void oneRow(Connection connection) throws SQLException {
    try (Statement statement = connection.createStatement();
         ResultSet result = statement.executeQuery(System.getProperty("bench.ping", "SELECT c0, c1, c2, c3, c4, c5, c6, c7 FROM t WHERE c0 = 4242"))) {
      if (!result.next() || (result.getLong(1) != 4242 && System.getProperty("bench.ping") == null)) {
        throw new AssertionError("the one-row query returned no row 4242");
      }
    }
  }

  /** Reads every value through getLong; returns an order-sensitive checksum. */
  private static long readAll(Connection connection) throws SQLException {
    long checksum = 0;
    try (Statement statement = connection.createStatement();
         ResultSet result = statement.executeQuery("SELECT * FROM t ORDER BY c0")) {
      while (result.next()) {
        for (int column = 1; column <= 8; column++) {
          checksum = checksum * 31 + result.getLong(column);
        }
      }
    }
    return checksum;
  }

  private static long median(List<Long> values) {
    return (long) percentile(values, 0.5);
  }

  private static double percentile(List<Long> values, double fraction) {
    long[] sorted = values.stream().mapToLong(Long::longValue).toArray();
    Arrays.sort(sorted);
    return sorted[Math.min(sorted.length - 1, (int) Math.floor(fraction * (sorted.length - 1) + 0.5))];
  }
}
