package io.thallus.benchmarks;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * The data of {@link ShardScalingBench}: a lineitem-like table written by DuckDB as one Parquet file per part under
 * {@code work/node<i>/lineitem/part<i>/} (each shard server's data root is {@code work/node<i>}), and the same files
 * hard-linked under {@code work/one/lineitem/part<i>/} for the one server. Kept between runs of the same size.
 */
final class ShardData {
  private ShardData() {}

  static Path nodeRoot(Path work, int part) {
    return work.resolve("node" + part);
  }

  static Path oneRoot(Path work) {
    return work.resolve("one");
  }

  /** Whether this DuckDB has the tpch extension built in: its install mode, or NOT_INSTALLED. */
  static String tpchExtension() throws SQLException {
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = duckdb.createStatement();
         ResultSet row = statement.executeQuery("SELECT install_mode FROM duckdb_extensions() "
             + "WHERE extension_name = 'tpch'")) {
      return row.next() ? row.getString(1) : "unknown to it";
    }
  }

  /** Writes {@code rows} rows in {@code parts} parts (unless a run of the same size left them); their files. */
  static List<Path> write(Path work, long rows, int parts) throws Exception {
    Path marker = work.resolve("rows-" + rows + "-parts-" + parts);
    List<Path> files = new ArrayList<>();
    for (int p = 0; p < parts; p++) {
      files.add(nodeRoot(work, p).resolve("lineitem/part" + p + "/data.parquet"));
    }
    if (Files.exists(marker)) {
      return files;
    }
    if (Files.exists(work)) {
      try (var old = Files.walk(work)) {
        old.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
      }
    }
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = duckdb.createStatement()) {
      for (int p = 0; p < parts; p++) {
        long from = rows * p / parts;
        long to = rows * (p + 1) / parts;
        Files.createDirectories(files.get(p).getParent());
        statement.execute("COPY (" + lineitem(from, to) + ") TO '" + files.get(p) + "' (FORMAT parquet)");
        Path linked = oneRoot(work).resolve("lineitem/part" + p + "/data.parquet");
        Files.createDirectories(linked.getParent());
        Files.createLink(linked, files.get(p));
      }
    }
    Files.createFile(marker);
    return files;
  }

  /**
   * Rows {@code [from, to)} of the table: four lines per order; quantity 1-50, price 900-2001 per unit, discount 0-10
   * %, tax 0-8 %, ship dates over TPC-H's seven years; status O after 1995-06-17, flag R or A for lines received by
   * then and N after, as TPC-H's generator sets them (so Q1 has its four groups).
   */
  private static String lineitem(long from, long to) {
    return "SELECT i // 4 + 1 AS l_orderkey, (i % 4 + 1)::INTEGER AS l_linenumber, q::DECIMAL(15,2) AS l_quantity, "
        + "(q * (900 + (hash(i * 8 + 1) % 110100) / 100))::DECIMAL(15,2) AS l_extendedprice, "
        + "((hash(i * 8 + 2) % 11) / 100)::DECIMAL(15,2) AS l_discount, "
        + "((hash(i * 8 + 3) % 9) / 100)::DECIMAL(15,2) AS l_tax, "
        + "CASE WHEN receipt <= DATE '1995-06-17' THEN (CASE WHEN hash(i * 8 + 4) % 2 = 0 THEN 'R' ELSE 'A' END) "
        + "ELSE 'N' END AS l_returnflag, CASE WHEN ship > DATE '1995-06-17' THEN 'O' ELSE 'F' END AS l_linestatus, "
        + "ship AS l_shipdate, receipt AS l_receiptdate "
        + "FROM (SELECT i, 1 + hash(i * 8) % 50 AS q, DATE '1992-01-02' + (hash(i * 8 + 5) % 2405)::INTEGER AS ship, "
        + "DATE '1992-01-02' + (hash(i * 8 + 5) % 2405)::INTEGER + (1 + hash(i * 8 + 6) % 30)::INTEGER AS receipt "
        + "FROM range(" + from + ", " + to + ") t(i))";
  }

  /** DuckDB's list literal of {@code files}. */
  static String fileList(List<Path> files) {
    StringBuilder list = new StringBuilder("[");
    for (Path file : files) {
      list.append(list.length() > 1 ? ", " : "").append('\'').append(file).append('\'');
    }
    return list.append(']').toString();
  }
}
