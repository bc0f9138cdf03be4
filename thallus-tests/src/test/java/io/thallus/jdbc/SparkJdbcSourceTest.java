package io.thallus.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.Location;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Spark's own JDBC source (a client nobody here wrote) reading a Thallus server through jdbc:thallus://. */
class SparkJdbcSourceTest {
  @TempDir
  static Path data;

  private static BufferAllocator allocator;
  private static ThallusServer server;
  private static SparkSession spark;
  private static String url;

  private static final String COLUMNS = "id, name, price, added, ratio, flag, seen, small, payload";
  private static final String ALL = "SELECT " + COLUMNS + " FROM items ORDER BY id";
  private static final String FILTERED = "SELECT " + COLUMNS + " FROM items WHERE small < 10 AND flag ORDER BY id";
  /** DuckDB's answers, read before the server opens the file (one process may attach a DuckDB file once). */
  private static List<String> allRows;
  private static List<String> filteredRows;

  @BeforeAll
  static void start() throws Exception {
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:" + data.resolve("shop.duckdb"));
         Statement statement = duckdb.createStatement()) {
      statement.execute("CREATE TABLE items AS SELECT i AS id, 'item ' || i AS name, "
          + "(i * 1.25)::DECIMAL(10,2) AS price, DATE '2024-01-01' + i::INTEGER AS added, i / 7.0 AS ratio, "
          + "i % 3 = 0 AS flag, TIMESTAMP '2024-01-01 00:00:00' + INTERVAL (i * 61) SECOND AS seen, "
          + "(i % 100)::INTEGER AS small, CASE WHEN i % 5 = 0 THEN NULL ELSE ('b' || i)::BLOB END AS payload "
          + "FROM range(2000) t(i)");
      allRows = read(statement, ALL);
      filteredRows = read(statement, FILTERED);
    }
    allocator = new RootAllocator();
    server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0),
            DuckDBEngine.builder().filesUnder(data).build()).dataRoot(data).build().start();
    url = "jdbc:thallus://127.0.0.1:" + server.getLocation().port() + "/shop.duckdb";
    spark = SparkSession.builder().master("local[2]").appName("thallus-jdbc-test")
        .config("spark.ui.enabled", "false").config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.host", "127.0.0.1").getOrCreate();
  }

  @AfterAll
  static void stop() {
    try {
      if (spark != null) {
        spark.stop();
      }
      server.close();
    } finally {
      allocator.close();
    }
  }

  private static List<String> read(Statement statement, String sql) throws Exception {
    List<String> rows = new ArrayList<>();
    try (ResultSet result = statement.executeQuery(sql)) {
      while (result.next()) {
        byte[] payload = result.getBytes(9);
        rows.add(result.getLong(1) + "|" + result.getString(2) + "|" + result.getBigDecimal(3) + "|"
            + result.getDate(4) + "|" + result.getDouble(5) + "|" + result.getBoolean(6) + "|"
            + result.getTimestamp(7) + "|" + result.getInt(8) + "|" + (payload == null ? "null" : new String(payload)));
      }
    }
    return rows;
  }

  private static List<String> spark(Dataset<Row> frame) {
    List<String> rows = new ArrayList<>();
    for (Row row : frame.collectAsList()) {
      byte[] payload = row.isNullAt(8) ? null : (byte[]) row.get(8);
      rows.add(row.getLong(0) + "|" + row.getString(1) + "|" + row.getDecimal(2) + "|" + row.getDate(3) + "|"
          + row.getDouble(4) + "|" + row.getBoolean(5) + "|" + row.getTimestamp(6) + "|" + row.getInt(7) + "|"
          + (payload == null ? "null" : new String(payload)));
    }
    return rows;
  }

  @Test
  void sparkReadsATableThroughTheDriverInPartitions() {
    Dataset<Row> frame = spark.read().format("jdbc")
        .option("url", url + "?transport=tcp")
        .option("driver", ThallusDriver.class.getName())
        .option("dbtable", "items")
        .option("partitionColumn", "id").option("lowerBound", "0").option("upperBound", "2000")
        .option("numPartitions", "4")
        .option("fetchsize", "300")
        .load();
    assertThat(frame.rdd().getNumPartitions()).isEqualTo(4);
    assertThat(frame.schema().fieldNames()).containsExactly(COLUMNS.split(", "));
    List<String> actual = spark(frame.select(COLUMNS.split(", ")[0], COLUMNS.substring(4).split(", "))
        .orderBy("id"));
    assertThat(actual).hasSize(2000).isEqualTo(allRows);
  }

  @Test
  void sparkPushesAFilteredQueryThroughTheDriver() {
    Dataset<Row> frame = spark.read().format("jdbc")
        .option("url", url)
        .option("driver", ThallusDriver.class.getName())
        .option("query", "SELECT " + COLUMNS + " FROM items WHERE small < 10")
        .load()
        .filter("flag = true");
    List<String> actual = spark(frame.orderBy("id"));
    assertThat(actual).isNotEmpty()
        .isEqualTo(filteredRows);
  }

  @Test
  void aServerErrorReachesSparkWithDuckDBsMessage() {
    assertThatThrownBy(() -> spark.read().format("jdbc")
        .option("url", url)
        .option("driver", ThallusDriver.class.getName())
        .option("query", "SELECT no_such_column FROM items")
        .load().collectAsList())
        .hasStackTraceContaining("no_such_column");
  }
}
