package io.thallus.e2e;

import static io.thallus.testing.Memory.awaitZero;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.thallus.Location;
import io.thallus.QueryRequest;
import io.thallus.StatusCode;
import io.thallus.ThallusClient;
import io.thallus.ThallusException;
import io.thallus.ThallusStream;
import io.thallus.conformance.DuckDBReference;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.Overlap;
import io.thallus.server.ThallusServer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Results made with the overlap forced on ({@link Overlap#producers}): each stream's next batch made on a producer
 * thread while it sends the last one, whatever this machine's cores. The rows are DuckDB's, in DuckDB's order, for
 * several streams at once; a stream closed or cancelled mid-result stops its producer and frees everything (each
 * test ends by closing the server, which fails on memory still held, and its allocator, which fails on any leak).
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class OverlapTest {
  private static final String MADE_AHEAD = "thallus.batches.made.ahead";
  private static final int BATCH_ROWS = 8192;

  private static ThallusServer.Builder server(BufferAllocator allocator, SimpleMeterRegistry meters, Overlap overlap) {
    return ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create())
        .overlap(overlap).meterRegistry(meters);
  }

  private static double madeAhead(SimpleMeterRegistry meters) {
    Counter counter = meters.find(MADE_AHEAD).counter();
    return counter == null ? 0 : counter.count();
  }

  /** Stream {@code k}'s query: its own rows and its own second column, so that a batch of another stream shows. */
  private static String query(int k, long rows) {
    long from = k * 1_000_000L;
    return "SELECT i, i * " + (k + 2) + " AS j FROM range(" + from + ", " + (from + rows) + ") t(i)";
  }

  @ParameterizedTest
  @ValueSource(strings = {"shm", "tcp", "cma"})
  void severalOverlappedStreamsAtOnceDeliverDuckDBsRowsInOrder(String transport) throws Exception {
    int streams = 4;
    long rows = 600_000;
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = server(allocator, meters, Overlap.producers(streams)).build().start()) {
      List<ThallusClient> clients = new ArrayList<>();
      ExecutorService readers = Executors.newFixedThreadPool(streams);
      try {
        List<Future<long[]>> read = new ArrayList<>();
        for (int k = 0; k < streams; k++) {
          // Two streams per client, two clients: streams of one connection and of several at once.
          if (k % 2 == 0) {
            clients.add(ThallusClient.connect(allocator, server.getLocation().withTransport(transport)));
          }
          ThallusClient client = clients.getLast();
          String sql = query(k, rows);
          read.add(readers.submit(() -> readAll(client, sql, transport)));
        }
        for (int k = 0; k < streams; k++) {
          long[] got = read.get(k).get(2, TimeUnit.MINUTES);
          List<Object> expected = DuckDBReference.row("SELECT count(*), sum(i), sum(j) FROM (" + query(k, rows)
              + ")");
          assertThat(got).as("stream %d: rows, sum(i), sum(j)", k).containsExactly(
              ((Number) expected.get(0)).longValue(), ((Number) expected.get(1)).longValue(),
              ((Number) expected.get(2)).longValue());
        }
      } finally {
        readers.shutdownNow();
        clients.forEach(ThallusClient::close);
      }
      assertThat(madeAhead(meters)).as("batches made ahead on producer threads").isPositive();
      awaitZero(() -> server.memoryUse().allocatedBytes(), "server memory after the clients left");
    }
  }

  /** Reads {@code sql} to its end: rows, sum(i), sum(j); fails if a row is out of DuckDB's order (i by one). */
  private static long[] readAll(ThallusClient client, String sql, String transport) {
    long count = 0;
    long sumI = 0;
    long sumJ = 0;
    long previous = Long.MIN_VALUE;
    try (ThallusStream stream = client.query(QueryRequest.builder(sql).batchRows(BATCH_ROWS).build())) {
      assertThat(stream.transport()).isEqualTo(transport);
      while (stream.hasNext()) {
        try (VectorSchemaRoot batch = stream.next()) {
          BigIntVector i = (BigIntVector) batch.getVector(0);
          BigIntVector j = (BigIntVector) batch.getVector(1);
          for (int row = 0; row < batch.getRowCount(); row++) {
            long value = i.get(row);
            if (previous != Long.MIN_VALUE && value != previous + 1) {
              throw new AssertionError("row " + count + " of " + sql + ": " + value + " after " + previous);
            }
            previous = value;
            sumI += value;
            sumJ += j.get(row);
            count++;
          }
        }
      }
    }
    return new long[] {count, sumI, sumJ};
  }

  /**
   * Closed (or cancelled) after a few batches, while its producer is likely inside DuckDB making the next: the
   * stream stops the engine, waits for the producer, frees its batch, and the connection goes on serving.
   */
  @ParameterizedTest
  @CsvSource({"shm, close", "shm, cancel", "tcp, close", "tcp, cancel"})
  void aStreamClosedOrCancelledMidResultStopsItsProducerAndLeavesNothing(String transport, String how)
      throws Exception {
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    // Each batch costs DuckDB real work (an md5 per row), so a producer is at work when the stream stops.
    String endless = "SELECT i, md5(i::VARCHAR) AS h FROM range(1000000000) t(i)";
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = server(allocator, meters, Overlap.producers(2)).build().start();
         ThallusClient client = ThallusClient.connect(allocator, server.getLocation().withTransport(transport))) {
      for (int round = 0; round < 2; round++) {
        ThallusStream stream = client.query(QueryRequest.builder(endless).batchRows(BATCH_ROWS).build());
        try {
          for (int b = 0; b < 5; b++) {
            try (VectorSchemaRoot batch = stream.next()) {
              assertThat(((BigIntVector) batch.getVector(0)).get(0)).isEqualTo((long) b * BATCH_ROWS);
            }
          }
          if (how.equals("cancel")) {
            stream.cancel();
            assertThatThrownBy(() -> {
              while (stream.hasNext()) {
                stream.next().close();
              }
            }).isInstanceOfSatisfying(ThallusException.class,
                e -> assertThat(e.code()).isEqualTo(StatusCode.CANCELLED));
          }
        } finally {
          stream.close();
        }
        awaitZero(() -> server.memoryUse().connectionBytes(), "server memory after the stream stopped");
      }
      assertThat(madeAhead(meters)).as("batches made ahead on producer threads").isPositive();
      List<Object> expected = DuckDBReference.row("SELECT count(*), sum(i) FROM range(300000) t(i)");
      long[] got = readAll(client, "SELECT i, i * 2 AS j FROM range(300000) t(i)", transport);
      assertThat(got[0]).isEqualTo(((Number) expected.get(0)).longValue());
      assertThat(got[1]).isEqualTo(((Number) expected.get(1)).longValue());
    }
  }

  /** Off: no batch is made on a producer thread, and the results are the same. */
  @Test
  void offMakesNoBatchAhead() throws Exception {
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = server(allocator, meters, Overlap.off()).build().start();
         ThallusClient client = ThallusClient.connect(allocator, server.getLocation().withTransport("shm"))) {
      long[] got = readAll(client, query(1, 200_000), "shm");
      List<Object> expected = DuckDBReference.row("SELECT count(*), sum(i), sum(j) FROM (" + query(1, 200_000) + ")");
      assertThat(got).containsExactly(((Number) expected.get(0)).longValue(),
          ((Number) expected.get(1)).longValue(), ((Number) expected.get(2)).longValue());
      assertThat(madeAhead(meters)).isZero();
    }
  }
}
