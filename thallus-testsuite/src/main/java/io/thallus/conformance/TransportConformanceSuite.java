package io.thallus.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static io.thallus.testing.Memory.awaitSteady;
import static io.thallus.testing.Memory.awaitZero;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.ClientOptions;
import io.thallus.IngestMode;
import io.thallus.IngestRequest;
import io.thallus.IngestResult;
import io.thallus.ThallusIngest;
import io.thallus.Location;
import io.thallus.QueryRequest;
import io.thallus.StatusCode;
import io.thallus.ThallusClient;
import io.thallus.ThallusException;
import io.thallus.ThallusStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What every transport must do, checked value by value against DuckDB run directly. Each transport runs it by
 * subclassing and naming itself; every test ends by closing its allocator, which fails on any leak.
 *
 * <p>Each test starts a server of its own in this JVM, unless {@code -Dthallus.conformance.server=HOST:PORT} and
 * {@code -Dthallus.conformance.metrics=URL} name one running on another host ({@code thallus serve --metrics-port}):
 * then every test talks to that one, and reads what it holds from its metrics ({@link ServerUnderTest}).
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
public abstract class TransportConformanceSuite {
  protected BufferAllocator allocator;
  private ServerUnderTest server;
  protected ThallusClient client;

  /** The transport under test, as named in {@code thallus+NAME://}. */
  protected abstract String transport();

  protected Location location() {
    return server.location().withTransport(transport());
  }

  protected ThallusClient connect(ClientOptions options) {
    return ThallusClient.connect(allocator, location(), options);
  }

  @BeforeEach
  void startServer() {
    allocator = new RootAllocator();
    server = ServerUnderTest.start(allocator);
    client = connect(ClientOptions.defaults());
  }

  @AfterEach
  void closeEverything() throws InterruptedException {
    try {
      if (client != null) {
        client.close();
      }
    } finally {
      try {
        if (server != null) {
          server.close();
        }
      } finally {
        allocator.close(); // throws on any leak, failing the test
      }
    }
  }

  /**
   * What the server's connections hold for their streams, their transports' shm segments included (a segment left
   * empty goes within seconds). (A remote server's metrics give only the whole allocator: see
   * {@link ServerUnderTest#connectionBytes()}.)
   */
  protected long connectionBytes() {
    return server.connectionBytes();
  }

  /**
   * What a local server's connection may hold beyond its batches while a client reads nothing, for transports whose
   * server side keeps memory of its own for the client (shm's segments); none by default.
   */
  protected long placedAllowance(long batchBytes) {
    return 0;
  }

  /**
   * Drops the tables a test is about to create, if an earlier run left them: a remote server keeps its database from
   * one run to the next (and its tests share it, so no two tests create the same name). Dropped rather than named
   * anew for each run: the names stay those the test reads, and the server keeps at most one copy of each.
   */
  private void dropLeftoverTables(String... names) {
    if (server instanceof ServerUnderTest.Remote) {
      for (String name : names) {
        client.query("DROP TABLE IF EXISTS " + name).close();
      }
    }
  }

  private Collected query(String sql, int batchRows) {
    try (ThallusStream stream = client.query(QueryRequest.builder(sql).batchRows(batchRows).build())) {
      assertThat(stream.transport()).isEqualTo(transport());
      return Collected.fromIterator(stream);
    }
  }

  private static void assertSameResult(Collected actual, Collected expected) {
    assertThat(actual.schema()).isEqualTo(expected.schema());
    assertThat(actual.rows()).hasSameSizeAs(expected.rows());
    for (int row = 0; row < expected.rows().size(); row++) {
      assertThat(actual.rows().get(row)).as("row %d", row).isEqualTo(expected.rows().get(row));
    }
  }

  @Test
  void everyTypeRoundTripsWithNulls() {
    String sql = TypeTable.sql(5000);
    Collected expected = DuckDBReference.run(sql, 1024);
    Collected actual = query(sql, 1024);
    assertThat(expected.rows()).hasSize(5000);
    assertThat(actual.batches()).isGreaterThan(1);
    for (int column = 1; column < expected.schema().getFields().size(); column++) {
      int c = column;
      assertThat(expected.rows()).as("column %s has nulls", expected.schema().getFields().get(c).getName())
          .anyMatch(r -> r.get(c) == null).anyMatch(r -> r.get(c) != null);
    }
    assertSameResult(actual, expected);
  }

  @Test
  void everyTypeRoundTripsThroughTheArrowReaderApi() throws Exception {
    String sql = TypeTable.sql(3000);
    Collected expected = DuckDBReference.run(sql, 700);
    Collected actual;
    try (ThallusStream stream = client.query(QueryRequest.builder(sql).batchRows(700).build())) {
      actual = Collected.fromReader(stream);
    }
    assertSameResult(actual, expected);
  }

  @Test
  void batchesTheConsumerKeepsStayIntactWhileLaterOnesArrive() {
    String sql = "SELECT i, i * 3 AS j, 'v' || i AS s FROM range(200000) t(i)";
    List<VectorSchemaRoot> kept = new ArrayList<>();
    try (ThallusStream stream = client.query(QueryRequest.builder(sql).batchRows(8192).build())) {
      while (stream.hasNext()) {
        kept.add(stream.next());
      }
      List<List<Object>> rows = new ArrayList<>();
      for (VectorSchemaRoot root : kept) {
        Values.appendRows(root, stream, rows);
      }
      assertThat(rows).isEqualTo(DuckDBReference.run(sql, 8192).rows());
    } finally {
      kept.forEach(VectorSchemaRoot::close);
    }
  }

  @Test
  void emptyResultHasItsSchemaAndNoRows() {
    String sql = "SELECT i AS id, 'x' || i AS name FROM range(10) t(i) WHERE i > 100";
    Collected actual = query(sql, 1024);
    assertThat(actual.rows()).isEmpty();
    assertThat(actual.schema()).isEqualTo(DuckDBReference.run(sql, 1024).schema());
  }

  /** Credits come back half a window at a time: no window size may leave the server without one, or lose a batch. */
  @Test
  void everyCreditWindowDeliversTheWholeResult() {
    String sql = "SELECT i, i * 7 AS seven, 'row ' || i AS name FROM range(6000) t(i)";
    Collected expected = DuckDBReference.run(sql, 150);
    for (int credits : new int[] {1, 2, 3, 5, 8}) {
      Collected actual;
      try (ThallusClient windowed = connect(ClientOptions.builder().credits(credits).build());
           ThallusStream stream = windowed.query(QueryRequest.builder(sql).batchRows(150).build())) {
        actual = Collected.fromIterator(stream);
      }
      assertThat(actual.batches()).as("batches with %d credits", credits).isGreaterThan(2 * 8);
      assertSameResult(actual, expected);
    }
  }

  @Test
  void oneRow() {
    String sql = "SELECT 42 AS answer, 'one' AS word, NULL::DOUBLE AS nothing";
    assertSameResult(query(sql, 1024), DuckDBReference.run(sql, 1024));
  }

  @Test
  void tenMillionRowsArriveInOrderWithTheRightChecksum() {
    long count = 0;
    long sumI = 0;
    long sumJ = 0;
    long expectedI = 0;
    try (ThallusStream stream = client.query(QueryRequest.builder(
        "SELECT i, i * 3 AS j FROM range(10000000) t(i)").batchRows(65536).build())) {
      while (stream.hasNext()) {
        try (VectorSchemaRoot root = stream.next()) {
          BigIntVector is = (BigIntVector) root.getVector(0);
          BigIntVector js = (BigIntVector) root.getVector(1);
          for (int row = 0; row < root.getRowCount(); row++) {
            long i = is.get(row);
            long j = js.get(row);
            if (i != expectedI || j != 3 * i) {
              throw new AssertionError("row " + count + " is (" + i + ", " + j + "), expected (" + expectedI + ", "
                  + 3 * expectedI + ")");
            }
            expectedI++;
            count++;
            sumI += i;
            sumJ += j;
          }
        }
      }
    }
    List<Object> expected = DuckDBReference.row(
        "SELECT count(*), sum(i)::BIGINT, sum(i * 3)::BIGINT FROM range(10000000) t(i)");
    assertThat(List.<Object>of(count, sumI, sumJ)).isEqualTo(expected);
  }

  @Test
  void twoHundredColumns() {
    String columns = IntStream.range(0, 200)
        .mapToObj(c -> c % 3 == 0 ? "'s' || (i + " + c + ") AS c" + c
            : c % 3 == 1 ? "(i * " + c + ")::DOUBLE AS c" + c
            : "CASE WHEN i % 7 = 0 THEN NULL ELSE i + " + c + " END AS c" + c)
        .collect(Collectors.joining(", "));
    String sql = "SELECT " + columns + " FROM range(3000) t(i)";
    assertSameResult(query(sql, 1000), DuckDBReference.run(sql, 1000));
  }

  @Test
  void eightConcurrentStreamsOnOneClient() throws Exception {
    ExecutorService threads = Executors.newFixedThreadPool(8);
    try {
      List<Future<Void>> results = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        String sql = "SELECT i, i * " + (t + 2) + " AS m, 't" + t + "-' || i AS s FROM range(" + (50000 + t * 1000)
            + ") t(i)";
        results.add(threads.submit(() -> {
          assertSameResult(query(sql, 4096), DuckDBReference.run(sql, 4096));
          return null;
        }));
      }
      for (Future<Void> result : results) {
        result.get(4, TimeUnit.MINUTES);
      }
    } finally {
      threads.shutdownNow();
    }
  }

  @Test
  void severalClientsOnOneServer() throws Exception {
    ExecutorService threads = Executors.newFixedThreadPool(3);
    try {
      List<Future<Void>> results = new ArrayList<>();
      for (int t = 0; t < 3; t++) {
        String sql = TypeTable.sql(1500 + t);
        Callable<Void> task = () -> {
          try (ThallusClient other = connect(ClientOptions.defaults());
               ThallusStream stream = other.query(QueryRequest.builder(sql).batchRows(500).build())) {
            assertSameResult(Collected.fromIterator(stream), DuckDBReference.run(sql, 500));
          }
          return null;
        };
        results.add(threads.submit(task));
      }
      for (Future<Void> result : results) {
        result.get(4, TimeUnit.MINUTES);
      }
    } finally {
      threads.shutdownNow();
    }
  }

  @Test
  void aConsumerThatStopsReadingHoldsTheServerBack() throws Exception {
    long batchBytes = 65536L * Long.BYTES;
    try (ThallusClient slow = connect(ClientOptions.builder().credits(2).build());
         ThallusStream stream = slow.query(QueryRequest.builder("SELECT i FROM range(50000000) t(i)")
             .batchRows(65536).build())) {
      try (VectorSchemaRoot first = stream.next()) {
        assertThat(first.getRowCount()).isEqualTo(65536);
      }
      // Two credits: at most two batches wait at the client (each may be rounded up to a power of two by the
      // allocator), and the server has stopped producing, so what the client holds stops growing nowhere near the
      // 400 MB of the whole result. Without the credits' hold it would grow past the bound (or never settle).
      assertThat(awaitSteady(slow::allocatedBytes, Duration.ofMillis(300), "the slow client's memory"))
          .isLessThanOrEqualTo(2 * 2 * batchBytes + batchBytes);
      // A remote server's figure is its whole allocator, which also counts the batches a transport has placed for
      // the client to fetch (rdma): one per credit at most, each in a power-of-two buffer under twice its size.
      long placed = server instanceof ServerUnderTest.Remote ? 2 * 2 * batchBytes : placedAllowance(batchBytes);
      assertThat(awaitSteady(this::connectionBytes, Duration.ofMillis(300), "the server's memory for the client"))
          .isLessThanOrEqualTo(4 * batchBytes + placed);
    }
    awaitZero(this::connectionBytes, "server memory after the stream closed");
  }

  @Test
  void aClientThatDisconnectsMidStreamLeavesNothingBehind() throws Exception {
    String sql = "SELECT i, 'x' || i FROM range(20000000) t(i)";
    ThallusClient leaving = connect(ClientOptions.defaults());
    ThallusStream stream = leaving.query(QueryRequest.builder(sql).batchRows(65536).build());
    try (VectorSchemaRoot first = stream.next()) {
      assertThat(first.getRowCount()).isPositive();
    }
    leaving.close(); // without closing the stream: the client closes it, the server sees the connection go
    awaitZero(server::serverBytes, "server memory after the client left");
    assertSameResult(query("SELECT 1 AS still_serving", 16), DuckDBReference.run("SELECT 1 AS still_serving", 16));
    if (server instanceof ServerUnderTest.Remote remote) {
      // Across hosts, a client that cannot close anything as well: its process SIGKILLed mid-read, and the server on
      // the other host learns it from the network alone.
      try (ReadingPeer peer = ReadingPeer.start(location(), sql, 65536)) {
        peer.awaitReading(120);
        assertThat(remote.openStreams()).as("streams open on the server while the peer reads").isPositive();
        peer.kill();
      }
      awaitZero(remote::openStreams, "streams open after the reading peer was killed");
      awaitZero(remote::serverBytes, "server memory after the reading peer was killed");
      assertSameResult(query("SELECT 3 AS serving_on", 16), DuckDBReference.run("SELECT 3 AS serving_on", 16));
    }
  }

  @Test
  void cancellingAStreamStopsTheQuery() throws InterruptedException {
    try (ThallusStream stream = client.query(QueryRequest.builder("SELECT i FROM range(100000000000) t(i)")
        .batchRows(1024).build())) {
      stream.next().close();
      stream.cancel();
      assertThatThrownBy(() -> {
        while (stream.hasNext()) {
          stream.next().close();
        }
      }).isInstanceOfSatisfying(ThallusException.class, e -> assertThat(e.code()).isEqualTo(StatusCode.CANCELLED));
    }
    awaitZero(this::connectionBytes, "server memory after cancel");
  }

  @Test
  void badSqlReportsDuckDBsMessageAndTheConnectionGoesOn() {
    assertThatThrownBy(() -> client.query("SELEC 1"))
        .isInstanceOfSatisfying(ThallusException.class, e -> {
          assertThat(e.code()).isEqualTo(StatusCode.INVALID_ARGUMENT);
          assertThat(e.getMessage()).contains("syntax error");
        });
    assertSameResult(query("SELECT 2 AS after_error", 16), DuckDBReference.run("SELECT 2 AS after_error", 16));
  }

  @Test
  void aQueryTimeoutEndsTheStreamWithDeadlineExceeded() {
    QueryRequest slow = QueryRequest.builder("SELECT count(*) FROM range(10000000000) a(i)")
        .timeout(Duration.ofMillis(300)).build();
    assertThatThrownBy(() -> {
      try (ThallusStream stream = client.query(slow)) {
        while (stream.hasNext()) {
          stream.next().close();
        }
      }
    }).isInstanceOfSatisfying(ThallusException.class,
        e -> assertThat(e.code()).isEqualTo(StatusCode.DEADLINE_EXCEEDED));
  }

  // The write direction: batches from the client into tables of the server's database.

  /** The reference's batches of {@code sql}, as a client made by DuckDB in its own process would hold them. */
  private static <T> T withReferenceBatches(String sql, int batchRows, BufferAllocator allocator,
      java.util.function.Function<org.apache.arrow.vector.ipc.ArrowReader, T> use) {
    try (java.sql.Connection duckdb = java.sql.DriverManager.getConnection("jdbc:duckdb:");
         java.sql.Statement statement = duckdb.createStatement();
         java.sql.ResultSet resultSet = statement.executeQuery(sql);
         org.apache.arrow.vector.ipc.ArrowReader reader = (org.apache.arrow.vector.ipc.ArrowReader)
             ((org.duckdb.DuckDBResultSet) resultSet).arrowExportStream(allocator, batchRows)) {
      return use.apply(reader);
    } catch (java.sql.SQLException | java.io.IOException e) {
      throw new AssertionError("reference query failed: " + e.getMessage(), e);
    }
  }

  @Test
  void everyTypeIngestsAndReadsBackEqual() throws InterruptedException {
    String sql = TypeTable.sql(5000);
    dropLeftoverTables("typed", "created");
    // Into a table of the type table's own types (appended): every value and type comes back as DuckDB has it.
    client.query("CREATE TABLE typed AS " + sql + " LIMIT 0").close();
    IngestResult written = withReferenceBatches(sql, 1024, allocator,
        reader -> client.ingest(IngestRequest.of("typed", IngestMode.APPEND), reader));
    assertThat(written.rows()).isEqualTo(5000);
    assertThat(written.batches()).isGreaterThan(1);
    assertThat(written.transport()).isEqualTo(transport());
    assertSameResult(query("SELECT * FROM typed ORDER BY row_id", 1024), DuckDBReference.run(sql, 1024));
    // Into a table the batches create: the same, except that a dictionary-encoded column becomes VARCHAR.
    withReferenceBatches(sql, 1024, allocator,
        reader -> client.ingest(IngestRequest.of("created", IngestMode.CREATE), reader));
    assertSameResult(query("SELECT * FROM created ORDER BY row_id", 1024),
        DuckDBReference.run("SELECT * REPLACE (c_enum::VARCHAR AS c_enum) FROM (" + sql + ")", 1024));
    awaitZero(this::connectionBytes, "connection memory after the ingest");
  }

  @Test
  void everyArrowTypeDuckDBScansIngestsAsDuckDBImportsIt() throws Exception {
    for (ArrowTypeCases.Case c : ArrowTypeCases.all()) {
      ArrowTypeCases.Expected expected = ArrowTypeCases.direct(c, 2);
      String table = "types_" + c.name();
      dropLeftoverTables(table);
      if (expected.refused()) {
        // DuckDB refuses the type: so does the ingest, naming the column, and nothing is left behind.
        try (org.apache.arrow.vector.ipc.ArrowReader reader = c.open(allocator)) {
          assertThatThrownBy(() -> client.ingest(IngestRequest.of(table, IngestMode.CREATE), reader)).as(c.name())
              .isInstanceOfSatisfying(ThallusException.class,
                  e -> assertThat(e.code()).isEqualTo(StatusCode.INVALID_ARGUMENT))
              .hasMessageContaining("column v (Arrow type ");
        }
        assertThat(query("SELECT count(*) FROM duckdb_tables() WHERE table_name = '" + table + "'", 16).rows())
            .as(c.name()).containsExactly(List.of(0L));
        continue;
      }
      // Created from the batches, then the same batches appended: as DuckDB does with them directly.
      for (IngestMode mode : List.of(IngestMode.CREATE, IngestMode.APPEND)) {
        try (org.apache.arrow.vector.ipc.ArrowReader reader = c.open(allocator)) {
          IngestResult written = client.ingest(IngestRequest.of(table, mode), reader);
          assertThat(written.rows()).as(c.name()).isEqualTo(10);
          assertThat(written.transport()).isEqualTo(transport());
        }
      }
      assertThat(ArrowTypeCases.rows(client, table)).as(c.name()).isEqualTo(expected.rows());
    }
    awaitZero(this::connectionBytes, "connection memory after the ingests");
  }

  @Test
  void appendAddsRowsAndReplaceReplacesTheTable() {
    String first = "SELECT i AS id, 'a' || i AS name, (i * 0.5)::DOUBLE AS score FROM range(100000) t(i)";
    String more = "SELECT i AS id, 'b' || i AS name, (i * 0.25)::DOUBLE AS score FROM range(100000, 250000) t(i)";
    dropLeftoverTables("t");
    withReferenceBatches(first, 8192, allocator, r -> client.ingest(IngestRequest.of("t", IngestMode.CREATE), r));
    IngestResult appended = withReferenceBatches(more, 50000, allocator,
        r -> client.ingest(IngestRequest.of("main.t", IngestMode.APPEND), r));
    assertThat(appended.rows()).isEqualTo(150000);
    String check = "SELECT count(*), sum(id), sum(hash(name)), sum(score) FROM ";
    assertThat(query(check + "t", 1024).rows().getFirst()).isEqualTo(
        DuckDBReference.run(check + "(" + first + " UNION ALL " + more + ")", 1024).rows().getFirst());
    String replacement = "SELECT i::INTEGER AS other FROM range(7) t(i)";
    withReferenceBatches(replacement, 1024, allocator,
        r -> client.ingest(IngestRequest.of("t", IngestMode.REPLACE), r));
    assertSameResult(query("SELECT * FROM t ORDER BY other", 1024), DuckDBReference.run(replacement, 1024));
  }

  @Test
  void largeBatchesIngestWithTheSameChecksum() throws InterruptedException {
    String sql = "SELECT i AS a, i * 2 AS b, i * 3 AS c, i * 5 AS d, i * 7 AS e, i * 11 AS f, i * 13 AS g,"
        + " i * 17 AS h FROM range(2000000) t(i)";
    dropLeftoverTables("wide");
    IngestResult written = withReferenceBatches(sql, 262144, allocator,
        r -> client.ingest(IngestRequest.of("wide", IngestMode.CREATE), r));
    assertThat(written.rows()).isEqualTo(2000000);
    String check = "SELECT count(*), sum(a), sum(b), sum(c), sum(d), sum(e), sum(f), sum(g), sum(h), "
        + "sum(hash(a, h)) FROM ";
    assertThat(query(check + "wide", 1024).rows().getFirst())
        .isEqualTo(DuckDBReference.run(check + "(" + sql + ")", 1024).rows().getFirst());
    awaitZero(this::connectionBytes, "connection memory after the ingest");
  }

  @Test
  void anIngestClosedBeforeFinishLeavesTheTableAsItWas() throws InterruptedException {
    dropLeftoverTables("kept");
    client.query("CREATE TABLE kept AS SELECT i AS v FROM range(10) t(i)").close();
    String sql = "SELECT i AS v FROM range(300000) t(i)";
    withReferenceBatches(sql, 65536, allocator, reader -> {
      try (ThallusIngest ingest = client.ingest(IngestRequest.of("kept", IngestMode.APPEND),
          reader.getVectorSchemaRoot().getSchema())) {
        for (int i = 0; i < 3 && reader.loadNextBatch(); i++) {
          ingest.write(reader.getVectorSchemaRoot());
        }
      } catch (java.io.IOException e) {
        throw new AssertionError(e);
      }
      return null;
    });
    assertThat(query("SELECT count(*), sum(v) FROM kept", 1024).rows())
        .isEqualTo(DuckDBReference.run("SELECT count(*), sum(v) FROM range(10) t(v)", 1024).rows());
    awaitZero(this::connectionBytes, "connection memory after the cancelled ingest");
  }
}
