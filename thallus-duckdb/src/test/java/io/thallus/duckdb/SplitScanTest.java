package io.thallus.duckdb;

import static org.assertj.core.api.Assertions.assertThat;

import io.thallus.engine.CancelSignal;
import io.thallus.engine.QueryResult;
import io.thallus.engine.QuerySpec;
import io.thallus.spi.BatchContents;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.duckdb.DuckDBConnection;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The engine's split of one query into parts (real DuckDB): each part reads only its row groups, together they hold
 * every row once (as DuckDB counts them), names and aliases as SQL writes them survive, and a query that is not a
 * scan of one table, or one started while a statement that may write runs, is not split.
 */
@Timeout(120)
class SplitScanTest {
  private static final long ROWS = 1_000_000;
  private BufferAllocator allocator;
  private DuckDBEngine engine;
  private final java.util.List<DuckDBSession> sessions = new java.util.ArrayList<>();

  @BeforeEach
  void start() {
    allocator = new RootAllocator();
    engine = DuckDBEngine.create();
    try (DuckDBSession setup = engine.openSession()) {
      for (String sql : List.of("CREATE SCHEMA \"Odd Schema\"",
          "CREATE TABLE \"Odd Schema\".\"Big \"\"T\"\"\" AS SELECT i AS id, i % 10 AS k FROM range(" + ROWS + ") t(i)",
          "CREATE TABLE \"rowid table\" AS SELECT i AS rowid, i AS id FROM range(" + ROWS + ") t(i)")) {
        setup.execute(new QuerySpec(sql, Optional.empty(), 1024, Map.of()), allocator, new CancelSignal()).close();
      }
    }
  }

  @AfterEach
  void stop() {
    sessions.forEach(DuckDBSession::close);
    engine.close();
    allocator.close();
  }

  /** Rows and the sum of the last column over every part, and the rows of each part. */
  private long[] readParts(List<QueryResult> parts) {
    long[] totals = new long[2 + parts.size()];
    for (int p = 0; p < parts.size(); p++) {
      try (QueryResult part = parts.get(p)) {
        for (BatchContents next = part.next(); next != null; next = part.next()) {
          try (BatchContents batch = next; var root = org.apache.arrow.vector.VectorSchemaRoot.create(part.schema(), allocator)) {
            new org.apache.arrow.vector.VectorLoader(root).load(batch.records());
            var last = (org.apache.arrow.vector.BigIntVector) root.getVector(root.getFieldVectors().size() - 1);
            for (int i = 0; i < root.getRowCount(); i++) {
              totals[1] += last.get(i);
            }
            totals[0] += root.getRowCount();
            totals[2 + p] += root.getRowCount();
          }
        }
      }
    }
    return totals;
  }

  /** The parts; a query that is not split runs on the session, which stays open until the test ends. */
  private List<QueryResult> split(String sql, int parts) {
    DuckDBSession session = engine.openSession();
    sessions.add(session);
    return session.executeSplit(new QuerySpec(sql, Optional.empty(), 8192, Map.of()), parts, allocator,
        new CancelSignal());
  }

  @Test
  void aQuotedQualifiedTableWithAnAliasSplitsIntoWholeRowGroups() {
    String sql = "SELECT 'ü' AS u, b.id FROM \"Odd Schema\".\"Big \"\"T\"\"\" AS b WHERE b.k < 5";
    List<QueryResult> parts = split(sql, 4);
    assertThat(parts).hasSize(4);
    long[] totals = readParts(parts);
    assertThat(totals[0]).isEqualTo(ROWS / 2);
    long expectedSum = 0;
    for (long i = 0; i < ROWS; i++) {
      expectedSum += i % 10 < 5 ? i : 0;
    }
    assertThat(totals[1]).isEqualTo(expectedSum);
    // Nine row groups into four parts: 2, 2, 2 and 3 row groups of 122,880 rowids, half of whose rows pass.
    assertThat(totals[2]).isEqualTo(2 * 122_880 / 2);
    assertThat(totals[5]).isEqualTo(ROWS / 2 - 3 * 122_880);
  }

  @Test
  void aPartScansOnlyItsRowGroups() throws Exception {
    SplitScan.TableScan scan;
    try (DuckDBConnection connection = engine.newConnection()) {
      scan = SplitScan.TableScan.of(connection, "SELECT id FROM \"Odd Schema\".\"Big \"\"T\"\"\" WHERE k = 1")
          .orElseThrow();
      try (Statement statement = connection.createStatement();
           ResultSet plan = statement.executeQuery("EXPLAIN ANALYZE " + scan.partition(122_880, 2 * 122_880))) {
        plan.next();
        assertThat(plan.getString(2)).contains("Row Groups Scanned: 1 / 9");
      }
    }
  }

  @Test
  void whatIsNotAScanOfOneTableStaysWhole() {
    for (String sql : List.of("SELECT count(*) FROM \"Odd Schema\".\"Big \"\"T\"\"\"",
        "SELECT id FROM \"Odd Schema\".\"Big \"\"T\"\"\" ORDER BY id",
        "SELECT id FROM \"Odd Schema\".\"Big \"\"T\"\"\" LIMIT 10",
        "SELECT DISTINCT k FROM \"Odd Schema\".\"Big \"\"T\"\"\"",
        "WITH x AS (SELECT id FROM \"Odd Schema\".\"Big \"\"T\"\"\") SELECT id FROM x",
        "SELECT id FROM \"rowid table\"",
        "SELECT i FROM range(500000) t(i)")) {
      List<QueryResult> parts = split(sql, 4);
      assertThat(parts).as(sql).hasSize(1);
      parts.forEach(QueryResult::close);
    }
  }

  @Test
  void aSplitStartedWhileAStatementMayWriteStaysWhole() throws Exception {
    WriteWindow window = engine.writes();
    long quiet = window.quietStamp();
    assertThat(quiet).isNotNegative();
    java.util.concurrent.CountDownLatch running = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    Thread writer = Thread.ofVirtual().start(() -> window.counting(() -> {
      running.countDown();
      try {
        return release.await(60, java.util.concurrent.TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        return false;
      }
    }));
    running.await();
    assertThat(window.quietStamp()).isNegative();
    assertThat(window.stillQuiet(quiet)).isFalse();
    List<QueryResult> parts = split("SELECT id FROM \"Odd Schema\".\"Big \"\"T\"\"\"", 4);
    assertThat(parts).hasSize(1);
    assertThat(readParts(parts)[0]).isEqualTo(ROWS);
    release.countDown();
    writer.join();
    // Quiet again, but a statement ran since the stamp: a split begun before it would not be one snapshot.
    assertThat(window.stillQuiet(quiet)).isFalse();
    assertThat(window.quietStamp()).isNotNegative();
  }

  @Test
  void noSplitWhileAWriteWhoseCommitComesAtItsResultsCloseStreams() {
    try (DuckDBSession setup = engine.openSession()) {
      setup.execute(new QuerySpec("CREATE TABLE written (id BIGINT)", Optional.empty(), 1024, Map.of()), allocator,
          new CancelSignal()).close();
    }
    String scan = "SELECT id FROM \"Odd Schema\".\"Big \"\"T\"\"\"";
    DuckDBSession writer = engine.openSession();
    sessions.add(writer);
    // Streams its rows in batches of 1024: its autocommit comes when its result closes.
    QueryResult returning = writer.execute(new QuerySpec("INSERT INTO written SELECT i FROM range(100000) t(i) "
        + "RETURNING id", Optional.empty(), 1024, Map.of()), allocator, new CancelSignal());
    try (BatchContents first = returning.next()) {
      assertThat(first.rowCount()).isPositive();
    }
    assertThat(engine.writes().quietStamp()).as("the write is still open").isNegative();
    List<QueryResult> whole = split(scan, 4);
    assertThat(whole).hasSize(1);
    assertThat(readParts(whole)[0]).isEqualTo(ROWS);
    returning.close();
    assertThat(engine.writes().quietStamp()).as("closed: committed").isNotNegative();
    List<QueryResult> parts = split(scan, 4);
    assertThat(parts).hasSize(4);
    assertThat(readParts(parts)[0]).isEqualTo(ROWS);
    // A SELECT whose text holds the word (a column so named) is not a write: it leaves the window quiet.
    QueryResult select = writer.execute(new QuerySpec("SELECT id AS returning FROM written", Optional.empty(), 1024,
        Map.of()), allocator, new CancelSignal());
    try {
      assertThat(engine.writes().quietStamp()).isNotNegative();
    } finally {
      select.close();
    }
  }
}
