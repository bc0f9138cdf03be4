package io.thallus.rdma.transport;

import io.thallus.IngestMode;
import io.thallus.IngestRequest;
import io.thallus.Location;
import io.thallus.ThallusClient;
import io.thallus.ThallusIngest;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.engine.CancelSignal;
import io.thallus.engine.EngineSession;
import io.thallus.engine.IngestSpec;
import io.thallus.engine.QueryEngine;
import io.thallus.engine.QueryResult;
import io.thallus.engine.QuerySpec;
import io.thallus.server.ThallusServer;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;

/**
 * rdma's ingest by READ (the server pulls each body) against by WRITE (the client pushes it into the server's ring),
 * side by side in one process on one device (harness/rdma-ingest-push-bench.sh runs it in the Soft-RoCE guest): a
 * server on rxe0 and a client ingesting the same batch of 8 BIGINT columns again and again, the two transfers
 * alternating (which goes first alternates too), after an untimed round of each. Prints each run's
 * GB/s and the process's CPU seconds per GB (client and server both: the one vCPU also runs rxe's packet work,
 * outside the process), then the medians. The server's ring is {@value RdmaTransport#PUSH_RING_BYTES_PROPERTY}
 * (set it on the command line). The server's engine only reads what arrives (each batch loaded, its rows counted and
 * its first column summed, then dropped), so that what is timed is the transport: inserting into DuckDB takes
 * longer than either transfer in the guest. Arguments: {@code ROWS_PER_RUN ROUNDS BATCH_ROWS...}.
 */
public final class IngestTransferBenchmarkMain {
  private static final int COLUMNS = 8;

  private IngestTransferBenchmarkMain() {}

  public static void main(String[] args) {
    long rowsPerRun = Long.parseLong(args[0]);
    int rounds = Integer.parseInt(args[1]);
    AtomicReference<long[]> drained = new AtomicReference<>();
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), drain(drained))
             .transports(List.of("rdma")).build().start()) {
      System.out.printf(Locale.ROOT, "ring %s bytes, %d rows of %d BIGINT per run%n",
          System.getProperty(RdmaTransport.PUSH_RING_BYTES_PROPERTY, "default"), rowsPerRun, COLUMNS);
      for (int a = 2; a < args.length; a++) {
        int batchRows = Integer.parseInt(args[a]);
        long batches = rowsPerRun / batchRows;
        Map<IngestTransfer, List<double[]>> runs = new EnumMap<>(IngestTransfer.class);
        try (VectorSchemaRoot root = batch(allocator, batchRows)) {
          for (int round = 0; round <= rounds; round++) {
            List<IngestTransfer> order = round % 2 == 0 ? List.of(IngestTransfer.READ, IngestTransfer.WRITE)
                : List.of(IngestTransfer.WRITE, IngestTransfer.READ);
            for (IngestTransfer transfer : order) {
              System.setProperty(IngestTransfer.PROPERTY, transfer.name());
              try (ThallusClient client = ThallusClient.connect(allocator,
                  server.getLocation().withTransport("rdma"))) {
                Thread watchdog = watchdog(transfer + " batch " + batchRows + " round " + round);
                long cpu = cpuNanos();
                long start = System.nanoTime();
                try (ThallusIngest ingest = client.ingest(IngestRequest.of("bench", IngestMode.CREATE),
                    root.getSchema())) {
                  for (long b = 0; b < batches; b++) {
                    ingest.write(root);
                  }
                  ingest.finish();
                }
                double seconds = (System.nanoTime() - start) / 1e9;
                watchdog.interrupt();
                double gb = batches * batchRows * COLUMNS * 8L / 1e9;
                double cpuPerGb = (cpuNanos() - cpu) / 1e9 / gb;
                check(drained.get(), batches * batchRows, batches * sum(batchRows));
                System.out.printf(Locale.ROOT, "%-5s batch %8d rows (%9d bytes) round %d: %.3f GB/s, %.2f cpu-s/GB%s%n",
                    transfer, batchRows, batchRows * COLUMNS * 8L, round, gb / seconds, cpuPerGb,
                    round == 0 ? " (untimed)" : "");
                if (round > 0) {
                  runs.computeIfAbsent(transfer, t -> new ArrayList<>()).add(new double[] {gb / seconds, cpuPerGb});
                }
              }
            }
          }
        }
        double read = median(runs.get(IngestTransfer.READ), 0);
        double write = median(runs.get(IngestTransfer.WRITE), 0);
        System.out.printf(Locale.ROOT, "MEDIAN batch %d rows (%d bytes): READ %.3f GB/s (%.2f cpu-s/GB), WRITE %.3f"
            + " GB/s (%.2f cpu-s/GB), WRITE/READ %.2fx%n", batchRows, batchRows * COLUMNS * 8L, read,
            median(runs.get(IngestTransfer.READ), 1), write, median(runs.get(IngestTransfer.WRITE), 1), write / read);
      }
    } finally {
      System.clearProperty(IngestTransfer.PROPERTY);
    }
  }

  /** Prints every thread's stack and ends the process if a run takes more than two minutes (a hang, not a figure). */
  private static Thread watchdog(String run) {
    return Thread.ofPlatform().daemon().start(() -> {
      try {
        Thread.sleep(120_000);
      } catch (InterruptedException e) {
        return;
      }
      System.out.println("HUNG: " + run);
      Thread.getAllStackTraces().forEach((thread, stack) -> {
        System.out.println(thread);
        for (StackTraceElement frame : stack) {
          System.out.println("    at " + frame);
        }
      });
      System.out.flush();
      Runtime.getRuntime().halt(2);
    });
  }

  private static long cpuNanos() {
    return ProcessHandle.current().info().totalCpuDuration().orElseThrow().toNanos();
  }

  /** One batch of {@code rows} rows, column k holding i * (k + 1). */
  private static VectorSchemaRoot batch(BufferAllocator allocator, int rows) {
    List<FieldVector> vectors = new ArrayList<>();
    for (int k = 0; k < COLUMNS; k++) {
      BigIntVector vector = new BigIntVector("c" + k, allocator);
      vector.allocateNew(rows);
      for (int i = 0; i < rows; i++) {
        vector.set(i, (long) i * (k + 1));
      }
      vector.setValueCount(rows);
      vectors.add(vector);
    }
    VectorSchemaRoot root = new VectorSchemaRoot(vectors);
    root.setRowCount(rows);
    return root;
  }

  private static long sum(int rows) {
    return (long) rows * (rows - 1) / 2;
  }

  /** The server read every row: their count and the first column's sum. */
  private static void check(long[] drained, long rows, long sum) {
    if (drained == null || drained[0] != rows || drained[1] != sum) {
      throw new AssertionError("the server read " + java.util.Arrays.toString(drained) + ", not " + rows
          + " rows summing to " + sum);
    }
  }

  /** An engine that takes ingests and only reads them: rows counted, the first column summed, into {@code last}. */
  private static QueryEngine drain(AtomicReference<long[]> last) {
    return new QueryEngine() {
      @Override
      public QueryResult execute(QuerySpec spec, BufferAllocator allocator) {
        throw ThallusException.of(StatusCode.UNIMPLEMENTED, "this engine only takes ingests");
      }

      @Override
      public EngineSession openSession() {
        return new EngineSession() {
          @Override
          public QueryResult execute(QuerySpec spec, BufferAllocator allocator, CancelSignal cancel) {
            throw ThallusException.of(StatusCode.UNIMPLEMENTED, "this engine only takes ingests");
          }

          @Override
          public long ingest(IngestSpec spec, ArrowReader batches, BufferAllocator allocator, CancelSignal cancel) {
            long rows = 0;
            long sum = 0;
            try {
              while (batches.loadNextBatch()) {
                VectorSchemaRoot root = batches.getVectorSchemaRoot();
                BigIntVector first = (BigIntVector) root.getVector(0);
                for (int i = 0; i < root.getRowCount(); i++) {
                  sum += first.get(i);
                }
                rows += root.getRowCount();
              }
            } catch (IOException e) {
              throw new IllegalStateException(e);
            }
            last.set(new long[] {rows, sum});
            return rows;
          }

          @Override
          public void close() {}
        };
      }

      @Override
      public void close() {}
    };
  }

  private static double median(List<double[]> values, int index) {
    double[] sorted = values.stream().mapToDouble(v -> v[index]).sorted().toArray();
    return sorted.length % 2 == 1 ? sorted[sorted.length / 2]
        : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
  }
}
