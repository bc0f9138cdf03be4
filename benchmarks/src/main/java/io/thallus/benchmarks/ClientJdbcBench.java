package io.thallus.benchmarks;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The JDBC part of benchmarks/clients.py (issue 35's client figures): rows x 8 BIGINT read row by row with
 * {@code getLong} on every column, through {@code jdbc:thallus} and Arrow's Flight SQL JDBC driver against a running
 * {@code thallus serve}, and through DuckDB's JDBC driver in this process (a fresh in-memory database each round).
 * Rounds alternate between drivers; each figure is the median of its rounds, and every read is checked (row count and
 * the sum of every column) before it counts. Prints a markdown table.
 *
 * <p>Usage: {@code ClientJdbcBench NATIVE_PORT FLIGHT_SQL_PORT ROWS ROUNDS}
 */
public final class ClientJdbcBench {
  private ClientJdbcBench() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 4) {
      throw new IllegalArgumentException("usage: ClientJdbcBench NATIVE_PORT FLIGHT_SQL_PORT ROWS ROUNDS");
    }
    int nativePort = Integer.parseInt(args[0]);
    int flightPort = Integer.parseInt(args[1]);
    long rows = Long.parseLong(args[2]);
    int rounds = Integer.parseInt(args[3]);
    StringBuilder columns = new StringBuilder("i AS c0");
    for (int c = 1; c < 8; c++) {
      columns.append(", i + ").append(c).append(" AS c").append(c);
    }
    String sql = "SELECT " + columns + " FROM range(" + rows + ") t(i)";
    // Each column c sums to rows * (rows - 1) / 2 + c * rows.
    long expected = 8 * (rows * (rows - 1) / 2) + 28 * rows;
    Map<String, String> drivers = new LinkedHashMap<>();
    drivers.put("jdbc:thallus (native protocol)", "jdbc:thallus://127.0.0.1:" + nativePort);
    drivers.put("DuckDB JDBC in process", "jdbc:duckdb:");
    drivers.put("Arrow Flight SQL JDBC -> Thallus Flight SQL door", "jdbc:arrow-flight-sql://127.0.0.1:" + flightPort
        + "/?useEncryption=false");
    Map<String, List<Double>> seconds = new LinkedHashMap<>();
    // A first round of each warms the JVM and is left out.
    for (int round = 0; round <= rounds; round++) {
      for (Map.Entry<String, String> driver : drivers.entrySet()) {
        long start = System.nanoTime();
        long[] read = read(driver.getValue(), sql);
        double elapsed = (System.nanoTime() - start) / 1e9;
        if (read[0] != rows || read[1] != expected) {
          throw new AssertionError(driver.getKey() + " read " + read[0] + " rows summing to " + read[1]
              + ", expected " + rows + " and " + expected);
        }
        if (round > 0) {
          seconds.computeIfAbsent(driver.getKey(), k -> new ArrayList<>()).add(elapsed);
        }
      }
    }
    double base = median(seconds.get("DuckDB JDBC in process"));
    System.out.printf(Locale.ROOT, "## %,d rows x 8 BIGINT read with getLong through JDBC, median of %d rounds,"
        + " seconds%n%n", rows, rounds);
    System.out.println("| driver | seconds | vs DuckDB JDBC in process |");
    System.out.println("|---|---|---|");
    for (Map.Entry<String, List<Double>> driver : seconds.entrySet()) {
      double s = median(driver.getValue());
      System.out.printf(Locale.ROOT, "| %s | %.3f | %.2fx |%n", driver.getKey(), s, s / base);
    }
  }

  /** The rows read and the sum of every value, connecting anew (as a round would). */
  private static long[] read(String url, String sql) throws Exception {
    long count = 0;
    long sum = 0;
    try (Connection connection = DriverManager.getConnection(url);
         Statement statement = connection.createStatement();
         ResultSet result = statement.executeQuery(sql)) {
      int columns = result.getMetaData().getColumnCount();
      while (result.next()) {
        for (int c = 1; c <= columns; c++) {
          sum += result.getLong(c);
        }
        count++;
      }
    }
    return new long[] {count, sum};
  }

  private static double median(List<Double> values) {
    List<Double> sorted = new ArrayList<>(values);
    sorted.sort(null);
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }
}
