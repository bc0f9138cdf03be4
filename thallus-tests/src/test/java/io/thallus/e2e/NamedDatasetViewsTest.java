package io.thallus.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.Location;
import io.thallus.QueryRequest;
import io.thallus.StatusCode;
import io.thallus.ThallusClient;
import io.thallus.ThallusException;
import io.thallus.ThallusStream;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A request's named datasets are views of that request only: none stays readable for a later request of the session,
 * also after a bind that failed part-way or a transaction that rolled back, and a session's own temporary view is
 * never replaced by one.
 */
class NamedDatasetViewsTest {
  @TempDir
  static Path data;

  private static BufferAllocator allocator;
  private static ThallusServer server;

  @BeforeAll
  static void start() throws Exception {
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = duckdb.createStatement()) {
      statement.execute("COPY (SELECT i FROM range(100) t(i)) TO '" + data.resolve("a.parquet") + "' (FORMAT parquet)");
      statement.execute("COPY (SELECT i FROM range(200) t(i)) TO '" + data.resolve("b.parquet") + "' (FORMAT parquet)");
    }
    // Named like Parquet, but not: DuckDB fails while it makes the view.
    Files.writeString(data.resolve("broken.parquet"), "not a parquet file");
    allocator = new RootAllocator();
    server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0),
        DuckDBEngine.builder().filesUnder(data).build()).dataRoot(data).build().start();
  }

  @AfterAll
  static void stop() {
    try {
      server.close();
    } finally {
      allocator.close();
    }
  }

  private static ThallusClient connect() {
    return ThallusClient.connect(allocator, server.getLocation());
  }

  /** The first column of the first row, as a long. */
  private static long first(ThallusClient client, QueryRequest request) {
    try (ThallusStream stream = client.query(request)) {
      long value = -1;
      while (stream.hasNext()) {
        try (VectorSchemaRoot batch = stream.next()) {
          if (value < 0 && batch.getRowCount() > 0) {
            value = ((Number) batch.getVector(0).getObject(0)).longValue();
          }
        }
      }
      return value;
    }
  }

  private static void run(ThallusClient client, String sql) {
    try (ThallusStream stream = client.query(sql)) {
      while (stream.hasNext()) {
        stream.next().close();
      }
    }
  }

  private static void assertNoView(ThallusClient client, String name) {
    assertThatThrownBy(() -> first(client, QueryRequest.builder("SELECT count(*) FROM " + name).build()))
        .isInstanceOf(ThallusException.class).hasMessageContaining("does not exist");
  }

  @Test
  void noViewOfAnEarlierRequestStaysAfterABindThatFailedPartWay() {
    try (ThallusClient client = connect()) {
      assertThat(first(client, QueryRequest.builder("SELECT (SELECT count(*) FROM x) + (SELECT count(*) FROM y)")
          .dataset("x", "a.parquet").dataset("y", "b.parquet").build())).isEqualTo(300);
      assertThatThrownBy(() -> first(client, QueryRequest.builder("SELECT count(*) FROM y")
          .dataset("x", "broken.parquet").dataset("y", "b.parquet").build())).isInstanceOf(ThallusException.class);
      assertNoView(client, "x");
      assertNoView(client, "y");
    }
  }

  @Test
  void aRolledBackTransactionNeitherLeavesAViewBehindNorTakesOneAway() {
    try (ThallusClient client = connect()) {
      run(client, "BEGIN");
      assertThat(first(client, QueryRequest.builder("SELECT count(*) FROM x").dataset("x", "a.parquet")
          .autoCommit(false).build())).isEqualTo(100);
      run(client, "ROLLBACK");
      // The rollback took the view made inside the transaction away: the next request makes it again.
      assertThat(first(client, QueryRequest.builder("SELECT count(*) FROM x").dataset("x", "a.parquet").build()))
          .isEqualTo(100);

      run(client, "BEGIN");
      assertNoView(client, "x");
      run(client, "ROLLBACK");
      // The rollback brought back the view the transaction's first request dropped: the next request drops it again.
      assertNoView(client, "x");
    }
  }

  @Test
  void aTemporaryViewOfTheSessionsOwnIsNotReplaced() {
    try (ThallusClient client = connect()) {
      run(client, "CREATE TEMP VIEW mine AS SELECT 42 AS v");
      assertThatThrownBy(() -> first(client, QueryRequest.builder("SELECT count(*) FROM mine")
          .dataset("mine", "a.parquet").build())).isInstanceOfSatisfying(ThallusException.class, e -> {
            assertThat(e.code()).isEqualTo(StatusCode.INVALID_ARGUMENT);
            assertThat(e.getMessage()).contains("temporary view or table of this session");
          });
      assertThat(first(client, QueryRequest.builder("SELECT v FROM mine").build())).isEqualTo(42);
    }
  }
}
