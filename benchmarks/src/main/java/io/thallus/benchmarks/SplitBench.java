package io.thallus.benchmarks;

import io.thallus.Location;
import io.thallus.QueryRequest;
import io.thallus.ThallusClient;
import io.thallus.ThallusStream;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.duckdb.DuckDBConnection;
import org.duckdb.DuckDBResultSet;

/**
 * One large query ({@code SELECT * FROM big}, N rows x 8 BIGINT) end to end on 1, 2, 4, ... parallel streams
 * ({@link ThallusClient#queryStreams}, each read by a thread of its own) per transport, beside DuckDB's plain
 * single-stream Arrow export in this process (its JDBC driver's {@code arrowExportStream}, default settings) of the
 * same table. Each figure is one run after one warm-up run, checked by row count and the sum of the first column.
 * The server lets one client hold as many engine threads as the most streams asked for.
 * Usage: {@code SplitBench [rows] [batch rows] [streams, e.g. 1,2,4] [transports, e.g. shm,tcp]}.
 */
public final class SplitBench {
  private static final String CREATE = "CREATE TABLE big AS SELECT i AS c0, i + 1 AS c1, i + 2 AS c2, i + 3 AS c3, "
      + "i + 4 AS c4, i + 5 AS c5, i + 6 AS c6, i + 7 AS c7 FROM range(%d) t(i)";
  private static final String QUERY = "SELECT * FROM big";

  private SplitBench() {}

  public static void main(String[] args) throws Exception {
    long rows = args.length > 0 ? Long.parseLong(args[0]) : 10_000_000L;
    int batchRows = args.length > 1 ? Integer.parseInt(args[1]) : 65_536;
    String[] streamCounts = (args.length > 2 ? args[2] : "1,2,4").split(",");
    String[] transports = (args.length > 3 ? args[3] : "shm,tcp").split(",");
    double gigabytes = rows * 8 * 8 / 1e9;
    long expectedSum = rows * (rows - 1) / 2;
    System.out.printf(Locale.ROOT, "| path | streams | seconds | GB/s | x plain DuckDB |%n|---|---|---|---|---|%n");
    double plain;
    try (BufferAllocator allocator = new RootAllocator();
         Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = duckdb.createStatement()) {
      statement.execute(String.format(Locale.ROOT, CREATE, rows));
      plainExport((DuckDBConnection) duckdb, allocator, batchRows, rows, expectedSum);
      long start = System.nanoTime();
      plainExport((DuckDBConnection) duckdb, allocator, batchRows, rows, expectedSum);
      plain = (System.nanoTime() - start) / 1e9;
    }
    print("DuckDB arrowExportStream in-process", 1, plain, gigabytes, plain);
    int most = 1;
    for (String count : streamCounts) {
      most = Math.max(most, Integer.parseInt(count.trim()));
    }
    // A client's streams hold at most engineThreadsPerConnection engine threads at once (default 2) and its
    // credential's lane maxStatementsPerCredential (default 4): both are raised to the most streams asked for.
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0),
             DuckDBEngine.create()).engineThreadsPerConnection(most)
             .admission(io.thallus.server.Admission.builder().maxStatementsPerCredential(Math.max(4, most)).build())
             .build().start()) {
      try (ThallusClient setup = ThallusClient.connect(allocator, server.getLocation().withTransport("tcp"))) {
        setup.query(String.format(Locale.ROOT, CREATE, rows)).close();
      }
      for (String transport : transports) {
        for (String count : streamCounts) {
          int streams = Integer.parseInt(count.trim());
          try (ThallusClient client = ThallusClient.connect(allocator,
              server.getLocation().withTransport(transport.trim()))) {
            QueryRequest request = QueryRequest.builder(QUERY).batchRows(batchRows).streams(streams).build();
            pull(client, request, rows, expectedSum);
            long start = System.nanoTime();
            pull(client, request, rows, expectedSum);
            print("Thallus " + transport.trim(), streams, (System.nanoTime() - start) / 1e9, gigabytes, plain);
          }
        }
      }
    }
  }

  private static void print(String path, int streams, double seconds, double gigabytes, double plain) {
    System.out.printf(Locale.ROOT, "| %s | %d | %.3f | %.2f | %.2f |%n", path, streams, seconds, gigabytes / seconds,
        plain / seconds);
  }

  private static void plainExport(DuckDBConnection duckdb, BufferAllocator allocator, int batchRows, long rows,
      long expectedSum) throws Exception {
    try (Statement statement = duckdb.createStatement();
         DuckDBResultSet result = (DuckDBResultSet) statement.executeQuery(QUERY);
         ArrowReader reader = (ArrowReader) result.arrowExportStream(allocator, batchRows)) {
      long[] totals = new long[2];
      while (reader.loadNextBatch()) {
        add(totals, reader.getVectorSchemaRoot());
      }
      check(totals, rows, expectedSum);
    }
  }

  private static void pull(ThallusClient client, QueryRequest request, long rows, long expectedSum)
      throws Exception {
    List<ThallusStream> parts = client.queryStreams(request);
    try (ExecutorService readers = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<long[]>> each = new ArrayList<>();
      for (ThallusStream part : parts) {
        each.add(readers.submit(() -> {
          long[] totals = new long[2];
          while (part.loadNextBatch()) {
            add(totals, part.getVectorSchemaRoot());
          }
          return totals;
        }));
      }
      long[] totals = new long[2];
      for (Future<long[]> one : each) {
        totals[0] += one.get()[0];
        totals[1] += one.get()[1];
      }
      check(totals, rows, expectedSum);
    } finally {
      parts.forEach(ThallusStream::close);
    }
  }

  private static void add(long[] totals, VectorSchemaRoot batch) {
    BigIntVector first = (BigIntVector) batch.getVector(0);
    totals[0] += batch.getRowCount();
    for (int i = 0; i < batch.getRowCount(); i++) {
      totals[1] += first.get(i);
    }
  }

  private static void check(long[] totals, long rows, long expectedSum) {
    if (totals[0] != rows || totals[1] != expectedSum) {
      throw new IllegalStateException("wrong answer: " + totals[0] + " rows, sum " + totals[1] + "; expected " + rows
          + ", " + expectedSum);
    }
  }
}
