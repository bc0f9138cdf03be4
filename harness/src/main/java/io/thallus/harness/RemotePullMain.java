package io.thallus.harness;

import io.thallus.ClientOptions;
import io.thallus.Location;
import io.thallus.ThallusClient;
import io.thallus.ThallusException;
import io.thallus.ThallusStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * A client on another host than its server (harness/rdma-2hosts.sh):
 * <pre>
 *   RemotePullMain pull LOCATION ROWS BATCH_ROWS RUNS     rows x 8 BIGINT, RUNS timed pulls, checksum checked
 *   RemotePullMain fail LOCATION ROWS BATCH_ROWS SECONDS  reads slowly until the pull fails; says how long after
 *                                                         the last batch the error came (the client's deadline)
 * </pre>
 * Waits (60 s at most) for the server to listen first.
 */
public final class RemotePullMain {
  private RemotePullMain() {}

  public static void main(String[] args) throws Exception {
    String mode = args[0];
    Location location = Location.parse(args[1]);
    long rows = Long.parseLong(args[2]);
    int batchRows = Integer.parseInt(args[3]);
    StringBuilder sql = new StringBuilder("SELECT i AS c0");
    for (int c = 1; c < 8; c++) {
      sql.append(", i + ").append(c).append(" AS c").append(c);
    }
    sql.append(" FROM range(").append(rows).append(") t(i)");
    long expected = rows * (rows - 1) / 2;
    try (BufferAllocator allocator = new RootAllocator()) {
      if (mode.equals("pull")) {
        pull(allocator, location, sql.toString(), batchRows, Integer.parseInt(args[4]), rows, expected);
      } else {
        fail(allocator, location, sql.toString(), batchRows, Integer.parseInt(args[4]));
      }
    }
  }

  private static ThallusClient connect(BufferAllocator allocator, Location location, ClientOptions options)
      throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (true) {
      try {
        return ThallusClient.connect(allocator, location, options);
      } catch (ThallusException e) {
        if (System.nanoTime() > deadline) {
          throw e;
        }
        Thread.sleep(500);
      }
    }
  }

  private static void pull(BufferAllocator allocator, Location location, String sql, int batchRows, int runs,
      long rows, long expected) throws InterruptedException {
    List<Double> seconds = new ArrayList<>();
    try (ThallusClient client = connect(allocator, location, ClientOptions.defaults())) {
      for (int run = 0; run <= runs; run++) {
        long start = System.nanoTime();
        long sum = 0;
        long got = 0;
        try (ThallusStream stream = client.query(io.thallus.QueryRequest.builder(sql).batchRows(batchRows).build())) {
          while (stream.hasNext()) {
            try (VectorSchemaRoot batch = stream.next()) {
              BigIntVector first = (BigIntVector) batch.getVector(0);
              for (int i = 0; i < batch.getRowCount(); i++) {
                sum += first.get(i);
              }
              got += batch.getRowCount();
            }
          }
        }
        double elapsed = (System.nanoTime() - start) / 1e9;
        if (got != rows || sum != expected) {
          throw new AssertionError("run " + run + " read " + got + " rows summing to " + sum + ", expected " + rows
              + " summing to " + expected);
        }
        if (run > 0) {
          seconds.add(elapsed);
        }
      }
      seconds.sort(null);
      double median = seconds.get(seconds.size() / 2);
      System.out.printf(Locale.ROOT, "%s over %s: %,d rows x 8 BIGINT in %,d-row batches, median of %d: %.3f s, "
          + "%.3f GB/s, checksum ok%n", location, client.transport(), rows, batchRows, runs, median,
          rows * 64.0 / median / 1e9);
    }
  }

  private static void fail(BufferAllocator allocator, Location location, String sql, int batchRows, int timeout)
      throws InterruptedException {
    ClientOptions options = ClientOptions.builder().timeout(Duration.ofSeconds(timeout)).build();
    try (ThallusClient client = connect(allocator, location, options);
         ThallusStream stream = client.query(io.thallus.QueryRequest.builder(sql).batchRows(batchRows).build())) {
      long batches = 0;
      long lastBatch = System.nanoTime();
      try {
        while (stream.hasNext()) {
          try (VectorSchemaRoot batch = stream.next()) {
            batches++;
            lastBatch = System.nanoTime();
          }
          Thread.sleep(200);
        }
        System.out.println("FAILED: the pull ended normally after " + batches + " batches; nothing broke it");
        System.exit(1);
      } catch (ThallusException e) {
        double after = (System.nanoTime() - lastBatch) / 1e9;
        System.out.printf(Locale.ROOT, "the pull failed after %d batches, %.1f s after the last one (client "
            + "timeout %d s): %s%n", batches, after, timeout, e.getMessage());
        if (after > timeout + 10) {
          System.out.println("FAILED: the error came later than the client's deadline");
          System.exit(1);
        }
      }
    }
  }
}
