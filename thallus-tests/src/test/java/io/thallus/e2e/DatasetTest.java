package io.thallus.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.thallus.Location;
import io.thallus.ThallusClient;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import io.thallus.ThallusStream;
import io.thallus.conformance.Collected;
import io.thallus.conformance.DuckDBReference;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Each kind of dataset a server serves, read through Thallus and compared with DuckDB reading the same files. */
class DatasetTest {
  @TempDir
  static Path data;

  private static BufferAllocator allocator;
  private static ThallusServer server;
  private static ThallusClient client;

  private static final String ROWS = "SELECT i AS id, 'name ' || i AS name, i * 1.5 AS score, "
      + "DATE '2024-01-01' + i::INTEGER AS day FROM range(%d, %d) t(i)";

  @BeforeAll
  static void writeDatasetsAndStart() throws Exception {
    Files.createDirectories(data.resolve("parts"));
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = duckdb.createStatement()) {
      copy(statement, String.format(ROWS, 0, 5000), data.resolve("one.parquet"), "parquet");
      copy(statement, String.format(ROWS, 0, 3000), data.resolve("one.csv"), "csv, header true");
      copy(statement, String.format(ROWS, 0, 2000), data.resolve("parts/a.parquet"), "parquet");
      copy(statement, String.format(ROWS, 2000, 4500), data.resolve("parts/b.parquet"), "parquet");
      statement.execute("ATTACH '" + data.resolve("shop.duckdb") + "' AS shop");
      statement.execute("CREATE TABLE shop.items AS " + String.format(ROWS, 0, 1200));
      statement.execute("DETACH shop");
    }
    allocator = new RootAllocator();
    server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0),
            DuckDBEngine.builder().filesUnder(data).build()).dataRoot(data).build().start();
    client = ThallusClient.connect(allocator, server.getLocation());
  }

  private static void copy(Statement statement, String query, Path target, String format) throws Exception {
    statement.execute("COPY (" + query + ") TO '" + target + "' (FORMAT " + format + ")");
  }

  @AfterAll
  static void stop() {
    try {
      client.close();
      server.close();
    } finally {
      allocator.close();
    }
  }

  private static void assertSame(String dataset, String sql, String directSql) {
    Collected actual;
    try (ThallusStream stream = client.query(sql, dataset)) {
      actual = Collected.fromIterator(stream);
    }
    Collected expected = DuckDBReference.run(directSql, 65536);
    assertThat(actual.rows()).isNotEmpty().isEqualTo(expected.rows());
    assertThat(actual.schema()).isEqualTo(expected.schema());
  }

  @Test
  void aParquetFile() {
    assertSame("one.parquet", "SELECT * FROM dataset ORDER BY id",
        "SELECT * FROM read_parquet('" + data.resolve("one.parquet") + "') ORDER BY id");
  }

  @Test
  void aCsvFile() {
    assertSame("one.csv", "SELECT * FROM dataset ORDER BY id",
        "SELECT * FROM read_csv('" + data.resolve("one.csv") + "') ORDER BY id");
  }

  @Test
  void aDirectoryOfParquetFiles() {
    assertSame("parts", "SELECT * FROM dataset ORDER BY id",
        "SELECT * FROM read_parquet('" + data.resolve("parts") + "/**/*.parquet') ORDER BY id");
  }

  @Test
  void aGlob() {
    assertSame("parts/*.parquet", "SELECT count(*) AS n, sum(id) AS s FROM dataset",
        "SELECT count(*) AS n, sum(id) AS s FROM read_parquet('" + data.resolve("parts") + "/*.parquet')");
  }

  @Test
  void aDuckDBDatabaseFile() {
    assertSame("shop.duckdb", "SELECT * FROM items WHERE id % 3 = 0 ORDER BY id",
        "SELECT * FROM (" + String.format(ROWS, 0, 1200) + ") WHERE id % 3 = 0 ORDER BY id");
  }
}
