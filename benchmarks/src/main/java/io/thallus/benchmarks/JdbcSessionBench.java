package io.thallus.benchmarks;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.duckdb.DuckDBAppender;
import org.duckdb.DuckDBConnection;

/**
 * The JDBC work of an application with a session, side by side in one JVM and one run: {@code executeBatch} of
 * {@code rows} x 4 columns (BIGINT, VARCHAR, DOUBLE, DATE), a one-row point query, and a loop of one-row
 * transactions. Thallus's driver against the benchmark server (in-memory DuckDB); DuckDB's own driver in-process
 * (its appender, its executeBatch, its queries: the floor, crossing no process boundary); Arrow Flight SQL's JDBC
 * driver for the point query (its writes need a Flight SQL server with updates, which this benchmark's is not).
 * Rounds alternate between drivers, so each sees the same machine noise; each figure is the median of its rounds,
 * and every batch is checked (row count and checksum) before it counts. Run by {@code benchmarks/run.sh}.
 */
public final class JdbcSessionBench {
  private static final String TABLE = "CREATE OR REPLACE TABLE batch_t (id BIGINT, name VARCHAR, price DOUBLE, "
      + "day DATE)";
  private static final String DUCKDB_BATCH = "DuckDB executeBatch in-process (one run)";
  /**
   * Untimed executeBatch rounds before the timed ones. With one, five timed rounds measured the JIT still compiling
   * the driver's and the benchmark's own per-row code (the same jar's median moved 58-83 ms between runs); after
   * about twenty the medians of separate runs agree within 10%.
   */
  private static final int BATCH_WARMUP_ROUNDS = 20;
  private static final String CHECK = "SELECT count(*), sum(id), sum(length(name)), sum(price) FROM batch_t";

  private JdbcSessionBench() {}

  public static void main(String[] args) throws Exception {
    int rows = args.length > 0 ? Integer.parseInt(args[0]) : 100_000;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
    int queries = args.length > 2 ? Integer.parseInt(args[2]) : 2_000;
    int transactions = args.length > 3 ? Integer.parseInt(args[3]) : 1_000;
    try (Fixture fixture = new Fixture()) {
      System.out.print(run(fixture, rows, rounds, queries, transactions));
    }
  }

  static String run(Fixture fixture, int rows, int rounds, int queries, int transactions) throws Exception {
    String thallusUrl = "jdbc:thallus://127.0.0.1:" + fixture.thallusPort();
    StringBuilder out = new StringBuilder();
    try (Connection thallus = DriverManager.getConnection(thallusUrl);
         Connection thallusTcp = DriverManager.getConnection(thallusUrl + "?transport=tcp");
         DuckDBConnection duckdb = (DuckDBConnection) DriverManager.getConnection("jdbc:duckdb:");
         Connection flightSql = DriverManager.getConnection(fixture.flightSql().jdbcUrl())) {
      // --- executeBatch ---
      Map<String, List<Long>> batch = new LinkedHashMap<>();
      batch.put("thallus executeBatch", new ArrayList<>());
      batch.put("DuckDB appender in-process", new ArrayList<>());
      batch.put(DUCKDB_BATCH, new ArrayList<>());
      Object[] expected = null;
      for (int round = -BATCH_WARMUP_ROUNDS; round < rounds; round++) {
        for (String name : batch.keySet()) {
          if (name.equals(DUCKDB_BATCH) && round != 0) {
            // DuckDB's own executeBatch runs statement by statement (about 4 k rows/s): one timed run is enough.
            continue;
          }
          Connection connection = name.startsWith("thallus") ? thallus : duckdb;
          execute(connection, TABLE);
          long start = System.nanoTime();
          switch (name) {
            case "thallus executeBatch", DUCKDB_BATCH -> executeBatch(connection, rows);
            default -> append(duckdb, rows);
          }
          long took = System.nanoTime() - start;
          Object[] check = check(connection);
          if (expected == null) {
            expected = check;
          } else if (!java.util.Arrays.equals(expected, check)) {
            throw new IllegalStateException(name + " wrote " + java.util.Arrays.toString(check) + ", expected "
                + java.util.Arrays.toString(expected));
          }
          if (round >= 0) {
            batch.get(name).add(took);
          }
        }
      }
      double appender = median(batch.get("DuckDB appender in-process"));
      out.append(String.format(Locale.ROOT, "### executeBatch, %,d rows x 4 columns (median of %d rounds)%n%n",
          rows, rounds));
      out.append("| path | median ms | k rows/s | vs DuckDB appender |\n|---|---|---|---|\n");
      for (Map.Entry<String, List<Long>> entry : batch.entrySet()) {
        double millis = median(entry.getValue()) / 1e6;
        out.append(String.format(Locale.ROOT, "| %s | %.1f | %.0f | %.2fx |%n", entry.getKey(), millis,
            rows / millis, millis / (appender / 1e6)));
      }

      // --- one-row point query ---
      execute(thallus, "CREATE OR REPLACE TABLE point_t AS SELECT i AS id, 'name ' || i AS name, i * 0.5 AS price "
          + "FROM range(1000000) t(i)");
      execute(duckdb, "CREATE OR REPLACE TABLE point_t AS SELECT i AS id, 'name ' || i AS name, i * 0.5 AS price "
          + "FROM range(1000000) t(i)");
      Map<String, Connection> pointers = new LinkedHashMap<>();
      pointers.put("thallus (same-host default)", thallus);
      pointers.put("thallus tcp", thallusTcp);
      pointers.put(JdbcBench.FLIGHT_SQL, flightSql);
      pointers.put(JdbcBench.DUCKDB, duckdb);
      Map<String, List<Long>> point = new LinkedHashMap<>();
      pointers.keySet().forEach(name -> point.put(name, new ArrayList<>()));
      for (int query = -200; query < queries; query++) {
        for (Map.Entry<String, Connection> entry : pointers.entrySet()) {
          long start = System.nanoTime();
          pointQuery(entry.getValue(), 4242 + query % 1000);
          if (query >= 0) {
            point.get(entry.getKey()).add(System.nanoTime() - start);
          }
        }
      }
      double duckdbPoint = median(point.get(JdbcBench.DUCKDB));
      out.append(String.format(Locale.ROOT, "%n### One-row point query in a session (median of %,d)%n%n", queries));
      out.append("| driver | median µs | p90 µs | vs DuckDB in-process |\n|---|---|---|---|\n");
      for (Map.Entry<String, List<Long>> entry : point.entrySet()) {
        out.append(String.format(Locale.ROOT, "| %s | %.0f | %.0f | %.2fx |%n", entry.getKey(),
            median(entry.getValue()) / 1e3, JdbcBench.percentile(entry.getValue(), 0.9) / 1e3,
            median(entry.getValue()) / duckdbPoint));
      }

      // --- commit loop ---
      Map<String, List<Long>> commits = new LinkedHashMap<>();
      commits.put("thallus", new ArrayList<>());
      commits.put(JdbcBench.DUCKDB, new ArrayList<>());
      for (int round = -1; round < rounds; round++) {
        for (String name : commits.keySet()) {
          Connection connection = name.equals("thallus") ? thallus : duckdb;
          execute(connection, "CREATE OR REPLACE TABLE commit_t (id INTEGER PRIMARY KEY, note VARCHAR)");
          long start = System.nanoTime();
          commitLoop(connection, transactions);
          long took = System.nanoTime() - start;
          if (count(connection, "SELECT count(*) FROM commit_t") != transactions) {
            throw new IllegalStateException(name + " lost committed rows");
          }
          if (round >= 0) {
            commits.get(name).add(took);
          }
        }
      }
      double duckdbCommits = median(commits.get(JdbcBench.DUCKDB));
      out.append(String.format(Locale.ROOT, "%n### %,d transactions (INSERT one row, commit), median of %d rounds%n%n",
          transactions, rounds));
      out.append("| driver | median ms | µs per transaction | vs DuckDB in-process |\n|---|---|---|---|\n");
      for (Map.Entry<String, List<Long>> entry : commits.entrySet()) {
        double nanos = median(entry.getValue());
        out.append(String.format(Locale.ROOT, "| %s | %.0f | %.0f | %.2fx |%n", entry.getKey(), nanos / 1e6,
            nanos / 1e3 / transactions, nanos / duckdbCommits));
      }
      execute(thallus, "DROP TABLE batch_t");
      execute(thallus, "DROP TABLE point_t");
      execute(thallus, "DROP TABLE commit_t");
    }
    return out.toString();
  }

  private static void executeBatch(Connection connection, int rows) throws SQLException {
    try (PreparedStatement insert = connection.prepareStatement("INSERT INTO batch_t VALUES (?, ?, ?, ?)")) {
      LocalDate epoch = LocalDate.of(2020, 1, 1);
      for (int i = 0; i < rows; i++) {
        insert.setLong(1, i);
        insert.setString(2, "name " + i);
        insert.setDouble(3, i * 1.5);
        insert.setObject(4, epoch.plusDays(i % 1000));
        insert.addBatch();
      }
      int[] counts = insert.executeBatch();
      if (counts.length != rows) {
        throw new IllegalStateException("executeBatch answered " + counts.length + " counts for " + rows + " rows");
      }
    }
  }

  private static void append(DuckDBConnection connection, int rows) throws SQLException {
    LocalDate epoch = LocalDate.of(2020, 1, 1);
    try (DuckDBAppender appender = connection.createAppender("batch_t")) {
      for (int i = 0; i < rows; i++) {
        appender.beginRow();
        appender.append((long) i);
        appender.append("name " + i);
        appender.append(i * 1.5);
        appender.append(epoch.plusDays(i % 1000));
        appender.endRow();
      }
    }
  }

  private static void pointQuery(Connection connection, long id) throws SQLException {
    try (Statement statement = connection.createStatement();
         ResultSet result = statement.executeQuery("SELECT id, name, price FROM point_t WHERE id = " + id)) {
      if (!result.next() || result.getLong(1) != id) {
        throw new IllegalStateException("the point query did not find " + id);
      }
    }
  }

  private static void commitLoop(Connection connection, int transactions) throws SQLException {
    connection.setAutoCommit(false);
    try (PreparedStatement insert = connection.prepareStatement("INSERT INTO commit_t VALUES (?, ?)")) {
      for (int i = 0; i < transactions; i++) {
        insert.setInt(1, i);
        insert.setString(2, "transaction " + i);
        insert.executeUpdate();
        connection.commit();
      }
    } finally {
      connection.setAutoCommit(true);
    }
  }

  private static Object[] check(Connection connection) throws SQLException {
    try (Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery(CHECK)) {
      result.next();
      return new Object[] {result.getLong(1), result.getLong(2), result.getLong(3), result.getDouble(4)};
    }
  }

  private static long count(Connection connection, String sql) throws SQLException {
    try (Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery(sql)) {
      result.next();
      return result.getLong(1);
    }
  }

  private static void execute(Connection connection, String sql) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      statement.execute(sql);
    }
  }

  private static double median(List<Long> values) {
    return JdbcBench.percentile(values, 0.5);
  }
}
