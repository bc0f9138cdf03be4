package io.thallus.benchmarks;

import io.thallus.Location;
import io.thallus.ThallusClient;
import io.thallus.server.ThallusServer;
import io.thallus.ThallusStream;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.flightsql.FastLanes;
import io.thallus.flightsql.ThallusFlightSqlServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.duckdb.DuckDBResultSet;

/**
 * Flight SQL side by side in one JVM and one run, over the same DuckDB engine: a large result (rows x 8 BIGINT)
 * through this server's Flight SQL door (GetFlightInfo + DoGet), through a Thallus client handed the same FlightInfo
 * that takes its first Thallus lane (shm on one host), through a plain Flight SQL server like GizmoSQL's (DuckDB
 * results straight into DoGet, benchmarks' FlightSqlServer), and DuckDB's own Arrow export in this process; then a
 * one-row query through each JDBC driver: Arrow's Flight SQL driver to both Flight SQL servers, jdbc:thallus, and
 * DuckDB's driver in process. Rounds alternate between peers; each figure is the median of its rounds, and every
 * result is checked (row count and a column sum) before it counts. Run by {@code benchmarks/run.sh}.
 */
public final class FlightSqlBench {
  private FlightSqlBench() {}

  private record Check(long rows, long sum) {}

  public static void main(String[] args) throws Exception {
    long rows = args.length > 0 ? Long.parseLong(args[0]) : 10_000_000;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
    int pointQueries = args.length > 2 ? Integer.parseInt(args[2]) : 2000;
    StringBuilder columns = new StringBuilder("i AS c0");
    for (int c = 1; c < 8; c++) {
      columns.append(", i + ").append(c).append(" AS c").append(c);
    }
    String sql = "SELECT " + columns + " FROM range(" + rows + ") t(i)";
    Check expected = new Check(rows, rows * (rows - 1) / 2);
    Map<String, List<Double>> seconds = new LinkedHashMap<>();
    Map<String, List<Double>> latency = new LinkedHashMap<>();
    try (BufferAllocator allocator = new RootAllocator();
         DuckDBEngine engine = DuckDBEngine.builder().build();
         ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), engine).build()
             .start();
         ThallusFlightSqlServer door = ThallusFlightSqlServer.builder(allocator, server.getLocation())
             .lanes(server).build().start();
         DuckDBEngine plainEngine = DuckDBEngine.builder().build();
         FlightSqlServer plain = new FlightSqlServer(plainEngine, allocator);
         BufferAllocator clientMemory = new RootAllocator();
         FlightClient doorClient = FlightClient.builder(clientMemory,
             org.apache.arrow.flight.Location.forGrpcInsecure("127.0.0.1", door.port())).build();
         FlightSqlClient doorSql = new FlightSqlClient(doorClient);
         FlightClient plainClient = FlightClient.builder(clientMemory,
             org.apache.arrow.flight.Location.forGrpcInsecure("127.0.0.1", plain.port())).build();
         FlightSqlClient plainSql = new FlightSqlClient(plainClient)) {
      Map<String, java.util.concurrent.Callable<Check>> peers = new LinkedHashMap<>();
      peers.put("Thallus Flight SQL door, DoGet (gRPC)", () -> doGet(doorSql, sql));
      peers.put("Thallus client handed the FlightInfo (fast lane)", () -> fastLane(doorSql, sql, clientMemory));
      peers.put("plain Flight SQL server over DuckDB (GizmoSQL-like), DoGet", () -> doGet(plainSql, sql));
      peers.put("DuckDB Arrow export in process (no transport)", () -> inProcess(sql, clientMemory));
      for (int round = 0; round <= rounds; round++) {
        for (Map.Entry<String, java.util.concurrent.Callable<Check>> peer : peers.entrySet()) {
          long start = System.nanoTime();
          Check got = peer.getValue().call();
          double elapsed = (System.nanoTime() - start) / 1e9;
          if (!got.equals(expected)) {
            throw new AssertionError(peer.getKey() + " read " + got + ", expected " + expected);
          }
          if (round > 0) {
            seconds.computeIfAbsent(peer.getKey(), k -> new ArrayList<>()).add(elapsed);
          }
        }
      }
      Map<String, String> jdbc = new LinkedHashMap<>();
      jdbc.put("Arrow Flight SQL JDBC -> Thallus Flight SQL door", "jdbc:arrow-flight-sql://127.0.0.1:" + door.port()
          + "/?useEncryption=false");
      jdbc.put("Arrow Flight SQL JDBC -> plain Flight SQL server", plain.jdbcUrl());
      jdbc.put("jdbc:thallus (native protocol)", "jdbc:thallus://127.0.0.1:" + server.getLocation().port());
      jdbc.put("DuckDB JDBC in process", "jdbc:duckdb:");
      for (int round = 0; round < 3; round++) {
        for (Map.Entry<String, String> driver : jdbc.entrySet()) {
          try (Connection connection = DriverManager.getConnection(driver.getValue());
               Statement statement = connection.createStatement()) {
            for (int i = 0; i < pointQueries; i++) {
              long start = System.nanoTime();
              try (ResultSet result = statement.executeQuery("SELECT 42 AS answer")) {
                if (!result.next() || result.getInt(1) != 42) {
                  throw new AssertionError(driver.getKey() + " answered wrongly");
                }
              }
              if (round > 0 || i >= pointQueries / 4) {
                latency.computeIfAbsent(driver.getKey(), k -> new ArrayList<>())
                    .add((System.nanoTime() - start) / 1e3);
              }
            }
          }
        }
      }
      System.err.println("Flight SQL sessions open after the JDBC rounds: " + door.sessionCount());
    }
    print(rows, seconds, latency);
  }

  private static Check count(VectorSchemaRoot root, Check so) {
    BigIntVector first = (BigIntVector) root.getVector(0);
    long sum = so.sum();
    for (int row = 0; row < root.getRowCount(); row++) {
      sum += first.get(row);
    }
    return new Check(so.rows() + root.getRowCount(), sum);
  }

  private static Check doGet(FlightSqlClient sql, String query) throws Exception {
    FlightInfo info = sql.execute(query);
    Check total = new Check(0, 0);
    for (FlightEndpoint endpoint : info.getEndpoints()) {
      try (FlightStream stream = sql.getStream(endpoint.getTicket())) {
        while (stream.next()) {
          total = count(stream.getRoot(), total);
        }
      }
    }
    return total;
  }

  private static Check fastLane(FlightSqlClient sql, String query, BufferAllocator memory) {
    FlightInfo info = sql.execute(query);
    FastLanes.Lane lane = FastLanes.of(info.getEndpoints().getFirst()).orElseThrow(
        () -> new AssertionError("the FlightInfo names no Thallus lane"));
    Check total = new Check(0, 0);
    // The first lane this machine can use: shm on one host when the server lists rdma first and there is no device.
    try (ThallusClient client = lane.connect(memory, io.thallus.ClientOptions.defaults());
         ThallusStream stream = client.query(lane.request())) {
      while (stream.hasNext()) {
        try (VectorSchemaRoot batch = stream.next()) {
          total = count(batch, total);
        }
      }
    }
    return total;
  }

  private static Check inProcess(String query, BufferAllocator memory) throws Exception {
    try (Connection connection = DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = connection.createStatement();
         ResultSet result = statement.executeQuery(query);
         org.apache.arrow.vector.ipc.ArrowReader reader = (org.apache.arrow.vector.ipc.ArrowReader)
             ((DuckDBResultSet) result).arrowExportStream(memory, 122_880)) {
      Check total = new Check(0, 0);
      while (reader.loadNextBatch()) {
        total = count(reader.getVectorSchemaRoot(), total);
      }
      return total;
    }
  }

  private static double median(List<Double> values) {
    List<Double> sorted = new ArrayList<>(values);
    sorted.sort(null);
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }

  private static double percentile(List<Double> values, double p) {
    List<Double> sorted = new ArrayList<>(values);
    sorted.sort(null);
    return sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(p * sorted.size()) - 1));
  }

  private static void print(long rows, Map<String, List<Double>> seconds, Map<String, List<Double>> latency) {
    double bytes = rows * 8.0 * 8;
    String plainKey = "plain Flight SQL server over DuckDB (GizmoSQL-like), DoGet";
    double plain = median(seconds.get(plainKey));
    System.out.printf(Locale.ROOT, "## Flight SQL: %,d rows x 8 BIGINT (%.0f MB), median of %d rounds%n%n", rows,
        bytes / 1e6, seconds.values().iterator().next().size());
    System.out.println("| path | seconds | GB/s | vs plain Flight SQL |");
    System.out.println("|---|---|---|---|");
    for (Map.Entry<String, List<Double>> peer : seconds.entrySet()) {
      double s = median(peer.getValue());
      System.out.printf(Locale.ROOT, "| %s | %.3f | %.2f | %.2fx |%n", peer.getKey(), s, bytes / s / 1e9, plain / s);
    }
    System.out.println();
    System.out.println("## One-row query (SELECT 42) through each JDBC driver, microseconds");
    System.out.println();
    String duckdb = "DuckDB JDBC in process";
    double base = median(latency.get(duckdb));
    System.out.println("| driver | median | p99 | vs DuckDB in process |");
    System.out.println("|---|---|---|---|");
    for (Map.Entry<String, List<Double>> driver : latency.entrySet()) {
      double m = median(driver.getValue());
      System.out.printf(Locale.ROOT, "| %s | %.0f | %.0f | %.2fx |%n", driver.getKey(), m,
          percentile(driver.getValue(), 0.99), m / base);
    }
  }
}
