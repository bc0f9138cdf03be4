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
import io.thallus.testing.Eventually;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * One query's result on several parallel streams, against a real server and DuckDB, over tcp and shm: the rows of
 * every split (1, 2, 4, 8 streams) add up to what DuckDB run directly answers, a query that cannot be split comes
 * whole (in order) on the first stream, and a cancel stops every stream with no buffer left behind.
 */
class ParallelStreamsTest {
  @TempDir
  static Path folder;

  /** 1,000,000 rows: 9 DuckDB row groups, so up to 8 streams each get rows. */
  private static final long ROWS = 1_000_000;
  private static final String SCAN = "SELECT id, v FROM big WHERE k < 500";
  private static BufferAllocator allocator;
  private static ThallusServer server;
  private static Path database;

  @BeforeAll
  static void start() throws Exception {
    database = folder.resolve("served.duckdb");
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:" + database);
         Statement statement = duckdb.createStatement()) {
      statement.execute("CREATE TABLE big AS SELECT i AS id, i % 1000 AS k, i * 3 AS v FROM range(" + ROWS + ") t(i)");
      statement.execute("CREATE TABLE small AS SELECT i AS id FROM range(1000) t(i)");
      statement.execute("CREATE VIEW big_view AS SELECT id, v FROM big");
    }
    allocator = new RootAllocator();
    server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0),
        DuckDBEngine.builder().database(database).build()).build().start();
  }

  @AfterAll
  static void stop() {
    try {
      server.close();
    } finally {
      allocator.close();
    }
  }

  /** DuckDB's own answer: rows, sum of the first column and of the second (0 when there is one column). */
  private static long[] direct(String sql) throws Exception {
    // The server holds the database file open: DuckDB answers over the same table made by the same statement.
    String wrapped = "SELECT count(*), coalesce(sum(c0), 0), coalesce(sum(c1), 0) FROM (" + sql + ") AS q(c0, c1)";
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = duckdb.createStatement()) {
      statement.execute("CREATE TABLE big AS SELECT i AS id, i % 1000 AS k, i * 3 AS v FROM range(" + ROWS + ") t(i)");
      try (ResultSet row = statement.executeQuery(wrapped)) {
        row.next();
        return new long[] {row.getLong(1), row.getLong(2), row.getLong(3)};
      }
    }
  }

  private static Location location(String transport) {
    return server.getLocation().withTransport(transport);
  }

  /** Rows, sum of column 0, sum of column 1 of one stream, read to its end. */
  private static long[] read(ThallusStream stream) {
    long[] totals = new long[3];
    while (stream.hasNext()) {
      try (VectorSchemaRoot batch = stream.next()) {
        add(totals, batch);
      }
    }
    return totals;
  }

  private static void add(long[] totals, VectorSchemaRoot batch) {
    totals[0] += batch.getRowCount();
    for (int column = 0; column < 2 && column < batch.getFieldVectors().size(); column++) {
      BigIntVector values = (BigIntVector) batch.getVector(column);
      for (int i = 0; i < batch.getRowCount(); i++) {
        totals[column + 1] += values.get(i);
      }
    }
  }

  /** Reads every stream on a thread of its own; the totals of each, in stream order. */
  private static List<long[]> readAll(List<ThallusStream> streams) throws Exception {
    try (ExecutorService readers = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<long[]>> each = new ArrayList<>();
      for (ThallusStream stream : streams) {
        each.add(readers.submit(() -> read(stream)));
      }
      List<long[]> totals = new ArrayList<>();
      for (Future<long[]> one : each) {
        totals.add(one.get());
      }
      return totals;
    }
  }

  private static long[] sum(List<long[]> parts) {
    long[] total = new long[3];
    for (long[] part : parts) {
      for (int i = 0; i < 3; i++) {
        total[i] += part[i];
      }
    }
    return total;
  }

  @ParameterizedTest
  @CsvSource({"tcp, 1", "tcp, 2", "tcp, 4", "tcp, 8", "shm, 1", "shm, 2", "shm, 4", "shm, 8"})
  void aSplitScanHoldsEveryRowOnce(String transport, int streams) throws Exception {
    long[] expected = direct(SCAN);
    try (BufferAllocator memory = allocator.newChildAllocator("client", 0, Long.MAX_VALUE);
         ThallusClient client = ThallusClient.connect(memory, location(transport))) {
      List<ThallusStream> parts = client.queryStreams(QueryRequest.builder(SCAN).batchRows(8192).streams(streams)
          .build());
      try {
        assertThat(parts).hasSize(streams);
        List<long[]> totals = readAll(parts);
        assertThat(sum(totals)).containsExactly(expected);
        // Nine row groups: every stream of the split got rows of its own.
        assertThat(totals).allSatisfy(part -> assertThat(part[0]).isPositive());
        assertThat(parts.get(0).transport()).isEqualTo(transport);
      } finally {
        parts.forEach(ThallusStream::close);
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"tcp", "shm"})
  void oneMergedStreamHoldsEveryRowOnce(String transport) throws Exception {
    long[] expected = direct(SCAN);
    try (BufferAllocator memory = allocator.newChildAllocator("client", 0, Long.MAX_VALUE);
         ThallusClient client = ThallusClient.connect(memory, location(transport));
         ThallusStream merged = client.query(QueryRequest.builder(SCAN).batchRows(8192).streams(4).build())) {
      assertThat(read(merged)).containsExactly(expected);
      assertThat(merged.stats()).hasValueSatisfying(stats -> assertThat(stats.rows()).isEqualTo(expected[0]));
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"tcp", "shm"})
  void anOrderedQueryComesWholeInDuckDBsOrder(String transport) throws Exception {
    String sql = "SELECT id, v FROM big WHERE k < 20 ORDER BY v DESC";
    List<Long> expected = new ArrayList<>();
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = duckdb.createStatement()) {
      statement.execute("CREATE TABLE big AS SELECT i AS id, i % 1000 AS k, i * 3 AS v FROM range(" + ROWS + ") t(i)");
      try (ResultSet rows = statement.executeQuery(sql)) {
        while (rows.next()) {
          expected.add(rows.getLong(1));
        }
      }
    }
    try (BufferAllocator memory = allocator.newChildAllocator("client", 0, Long.MAX_VALUE);
         ThallusClient client = ThallusClient.connect(memory, location(transport))) {
      List<Long> merged = new ArrayList<>();
      try (ThallusStream stream = client.query(QueryRequest.builder(sql).batchRows(1000).streams(4).build())) {
        while (stream.hasNext()) {
          try (VectorSchemaRoot batch = stream.next()) {
            BigIntVector ids = (BigIntVector) batch.getVector(0);
            for (int i = 0; i < batch.getRowCount(); i++) {
              merged.add(ids.get(i));
            }
          }
        }
      }
      assertThat(merged).containsExactlyElementsOf(expected);
    }
  }

  /** Queries that are not a scan of one table come whole on the first stream; the others end empty. */
  @ParameterizedTest
  @ValueSource(strings = {
      "SELECT k, count(*) FROM big GROUP BY k",
      "SELECT count(*), max(v) FROM big",
      "SELECT id, v FROM big LIMIT 300000",
      "SELECT b.id, s.id FROM big b JOIN small s ON b.id = s.id",
      "SELECT id, v FROM big_view WHERE id % 2 = 0",
      "SELECT DISTINCT k, k FROM big",
      "SELECT id, max(v) OVER () FROM big WHERE id < 1000",
      "SELECT id, v FROM big WHERE id < 1000 UNION ALL SELECT id, v FROM big WHERE id >= 999000"})
  void aQueryThatCannotBeSplitComesWholeOnTheFirstStream(String sql) throws Exception {
    String expectedSql = sql.replace("big_view", "(SELECT id, v FROM big)").replace("JOIN small s",
        "JOIN (SELECT i AS id FROM range(1000) t(i)) s");
    long[] expected = expectedSql.contains("LIMIT") ? new long[] {300_000, -1, -1} : direct(expectedSql);
    try (BufferAllocator memory = allocator.newChildAllocator("client", 0, Long.MAX_VALUE);
         ThallusClient client = ThallusClient.connect(memory, location("tcp"))) {
      List<ThallusStream> parts = client.queryStreams(QueryRequest.builder(sql).streams(4).build());
      try {
        List<long[]> totals = readAll(parts);
        if (expected[1] < 0) {
          assertThat(totals.get(0)[0]).isEqualTo(expected[0]);
        } else {
          assertThat(totals.get(0)).containsExactly(expected);
        }
        assertThat(totals.subList(1, 4)).allSatisfy(part -> assertThat(part[0]).isZero());
      } finally {
        parts.forEach(ThallusStream::close);
      }
    }
  }

  /** A statement inside the session's transaction reads what it wrote: it is not split onto other connections. */
  @Test
  void aQueryInTheSessionsTransactionIsNotSplit() throws Exception {
    try (BufferAllocator memory = allocator.newChildAllocator("client", 0, Long.MAX_VALUE);
         ThallusClient client = ThallusClient.connect(memory, location("tcp"))) {
      client.query(QueryRequest.builder("INSERT INTO small VALUES (-1)").autoCommit(false).build()).close();
      List<ThallusStream> parts = client.queryStreams(QueryRequest.builder("SELECT id FROM small").autoCommit(false)
          .streams(4).build());
      try {
        List<long[]> totals = readAll(parts);
        assertThat(totals.get(0)[0]).isEqualTo(1001);
        assertThat(totals.get(0)[1]).isEqualTo(999 * 1000 / 2 - 1);
        assertThat(totals.subList(1, 4)).allSatisfy(part -> assertThat(part[0]).isZero());
      } finally {
        parts.forEach(ThallusStream::close);
      }
      client.query(QueryRequest.builder("ROLLBACK").autoCommit(false).build()).close();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"tcp", "shm"})
  void cancellingOneStreamStopsAllAndLeavesNoBuffer(String transport) throws Exception {
    long serverBefore = allocator.getAllocatedMemory();
    try (BufferAllocator memory = allocator.newChildAllocator("client", 0, Long.MAX_VALUE);
         ThallusClient client = ThallusClient.connect(memory, location(transport))) {
      List<ThallusStream> parts = client.queryStreams(QueryRequest.builder("SELECT id, v FROM big").batchRows(4096)
          .streams(4).build());
      try {
        assertThat(parts.get(0).hasNext()).isTrue();
        parts.get(0).next().close();
        parts.get(0).cancel();
        for (int i = 0; i < parts.size(); i++) {
          ThallusStream part = parts.get(i);
          assertThatThrownBy(() -> read(part)).as("stream %d over %s", i, transport)
              .isInstanceOfSatisfying(ThallusException.class,
                  e -> assertThat(e.code()).isEqualTo(StatusCode.CANCELLED));
        }
      } finally {
        parts.forEach(ThallusStream::close);
      }
      ThallusStream merged = client.query(QueryRequest.builder("SELECT id, v FROM big").batchRows(4096).streams(4)
          .build());
      merged.next().close();
      merged.close();
      // The client is still usable, and every stream of both splits has ended on the server.
      try (ThallusStream after = client.query("SELECT count(*) FROM big")) {
        assertThat(read(after)[1]).isEqualTo(ROWS);
      }
      Eventually.await("no buffer left on the client", Duration.ofSeconds(30), () -> memory.getAllocatedMemory() == 0);
    }
    Eventually.await("no buffer left on the server", Duration.ofSeconds(30),
        () -> allocator.getAllocatedMemory() <= serverBefore);
  }

  /** A part that fails in DuckDB fails the whole split: every stream ends with an error, none with END. */
  @ParameterizedTest
  @ValueSource(strings = {"tcp", "shm"})
  void onePartFailingStopsEveryStream(String transport) throws Exception {
    String sql = "SELECT id, CASE WHEN id = 700000 THEN error('row 700000 is bad') ELSE v END FROM big";
    try (BufferAllocator memory = allocator.newChildAllocator("client", 0, Long.MAX_VALUE);
         ThallusClient client = ThallusClient.connect(memory, location(transport))) {
      List<ThallusStream> parts = client.queryStreams(QueryRequest.builder(sql).batchRows(4096).streams(4).build());
      try {
        // Read a batch of each part in turn, so every part is about as far as the others when the bad row's part
        // fails (the bad row lies well before the end of its part, and a part is 60 or more batches): no part can have
        // ended whole before then, whatever the threads' timing, and each still running must end stopped.
        StatusCode[] codes = new StatusCode[parts.size()];
        boolean[] over = new boolean[parts.size()];
        int running = parts.size();
        while (running > 0) {
          for (int i = 0; i < parts.size(); i++) {
            if (over[i]) {
              continue;
            }
            try {
              if (parts.get(i).hasNext()) {
                parts.get(i).next().close();
                continue;
              }
            } catch (ThallusException e) {
              codes[i] = e.code();
            }
            over[i] = true;
            running--;
          }
        }
        assertThat(codes).doesNotContainNull();
        assertThat(codes).contains(StatusCode.INVALID_ARGUMENT);
      } finally {
        parts.forEach(ThallusStream::close);
      }
      Eventually.await("no buffer left on the client", Duration.ofSeconds(30), () -> memory.getAllocatedMemory() == 0);
    }
  }

  /**
   * Over the raw protocol: a split OPEN the server refuses is answered with an ERROR on every one of its ids that no
   * live stream holds.
   */
  @Test
  void aRefusedSplitIsAnsweredOnEveryId() throws Exception {
    try (RawControlConnection raw = new RawControlConnection(location("ipc"))) {
      raw.send(new io.thallus.internal.protocol.Message.Hello(io.thallus.internal.protocol.Protocol.VERSION, "raw",
          List.of("ipc"), java.util.Map.of(), java.util.Map.of()));
      assertThat(raw.receive()).isInstanceOf(io.thallus.internal.protocol.Message.Welcome.class);
      int split = io.thallus.internal.protocol.Message.Open.SPLIT;
      raw.send(new io.thallus.internal.protocol.Message.Open(1, SCAN, "", 1024, 1, 0,
          split | io.thallus.internal.protocol.Message.Open.SCHEMA_ONLY, List.of(), java.util.Map.of(), new byte[0],
          3));
      assertErrorsOn(raw, StatusCode.INVALID_ARGUMENT, 1, 2, 3);
      // A stream on id 11, still open (it waits for credits), makes a split over ids 10 to 12 refused: the ERROR goes
      // to the split's free ids only, never to the live stream on 11, which is not this request's to fail.
      raw.send(new io.thallus.internal.protocol.Message.Open(11, SCAN, "", 1024, 0, 0, java.util.Map.of()));
      assertThat(raw.receive()).isInstanceOf(io.thallus.internal.protocol.Message.Opened.class);
      raw.send(new io.thallus.internal.protocol.Message.Open(10, SCAN, "", 1024, 1, 0, split, List.of(),
          java.util.Map.of(), new byte[0], 3));
      assertErrorsOn(raw, StatusCode.FAILED_PRECONDITION, 10, 12);
    }
  }

  private static void assertErrorsOn(RawControlConnection raw, StatusCode code, int... ids) throws Exception {
    List<Integer> answered = new ArrayList<>();
    for (int i = 0; i < ids.length; i++) {
      io.thallus.internal.protocol.Message reply = raw.receive();
      assertThat(reply).isInstanceOfSatisfying(io.thallus.internal.protocol.Message.Error.class,
          error -> assertThat(error.code()).isEqualTo(code));
      answered.add(((io.thallus.internal.protocol.Message.Error) reply).streamId());
    }
    assertThat(answered).containsExactlyInAnyOrder(java.util.Arrays.stream(ids).boxed().toArray(Integer[]::new));
  }

  @Test
  void askingForTooManyStreamsIsRefused() {
    assertThatThrownBy(() -> QueryRequest.builder(SCAN).streams(65)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("1..64");
    assertThatThrownBy(() -> QueryRequest.builder(SCAN).streams(0)).isInstanceOf(IllegalArgumentException.class);
  }
}
