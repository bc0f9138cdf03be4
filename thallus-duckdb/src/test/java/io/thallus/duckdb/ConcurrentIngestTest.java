package io.thallus.duckdb;

import static org.assertj.core.api.Assertions.assertThat;

import io.thallus.IngestMode;
import io.thallus.IngestRequest;
import io.thallus.IngestResult;
import io.thallus.Location;
import io.thallus.ThallusClient;
import io.thallus.ThallusIngest;
import io.thallus.ThallusStream;
import io.thallus.server.ThallusServer;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Several clients' ingests into one table run at once, each all or nothing: one held open mid-ingest does not stop
 * another from writing and committing into the same table (nothing of ours, and nothing of DuckDB's for a table
 * without keys, serializes them), one abandoned mid-ingest leaves nothing, and the table then holds exactly the
 * committed rows, as DuckDB computes them directly.
 */
@Timeout(120)
class ConcurrentIngestTest {
  private static final int BATCH_ROWS = 50_000;

  @ParameterizedTest
  @ValueSource(strings = {"shm", "tcp"})
  void ingestsIntoOneTableRunAtOnceAndEachIsAllOrNothing(String transport) throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create())
             .build().start();
         ThallusClient setup = ThallusClient.connect(allocator, server.getLocation().withTransport(transport));
         ThallusClient held = ThallusClient.connect(allocator, server.getLocation().withTransport(transport));
         ThallusClient quick = ThallusClient.connect(allocator, server.getLocation().withTransport(transport));
         ThallusClient abandoned = ThallusClient.connect(allocator, server.getLocation().withTransport(transport))) {
      run(setup, "CREATE TABLE t (k BIGINT, v BIGINT)");
      IngestRequest append = IngestRequest.of("t", IngestMode.APPEND);
      try (Batches batches = new Batches(allocator)) {
        ThallusIngest heldOpen = held.ingest(append, batches.root.getSchema());
        batches.write(heldOpen, 0, 2);
        // While that ingest is open (its transaction holds two batches), another writes into the same table.
        CompletableFuture<IngestResult> other = CompletableFuture.supplyAsync(() -> {
          try (Batches own = new Batches(allocator);
               ThallusIngest ingest = quick.ingest(append, own.root.getSchema())) {
            own.write(ingest, 10, 3);
            return ingest.finish();
          }
        });
        assertThat(other.get(60, TimeUnit.SECONDS).rows()).as("written beside the open ingest")
            .isEqualTo(3L * BATCH_ROWS);
        // One abandoned mid-ingest (its client closes it unfinished, as a failing reader does) writes nothing.
        try (ThallusIngest dropped = abandoned.ingest(append, batches.root.getSchema())) {
          batches.write(dropped, 20, 2);
        }
        assertThat(count(setup)).as("the other's rows, committed; neither open one's").isEqualTo(3L * BATCH_ROWS);
        batches.write(heldOpen, 2, 2);
        assertThat(heldOpen.finish().rows()).isEqualTo(4L * BATCH_ROWS);
        heldOpen.close();
      }
      // Batches 0-3 (the held one) and 10-12 (the other), each row k with v = 3k: DuckDB's own sums of the same.
      List<Long> expected = plainDuckDB("SELECT count(*), sum(i), sum(3 * i) FROM (SELECT i FROM range(0, "
          + 4 * BATCH_ROWS + ") t(i) UNION ALL SELECT i FROM range(" + 10L * BATCH_ROWS + ", " + 13L * BATCH_ROWS
          + ") t(i))");
      assertThat(rowOf(setup, "SELECT count(*), sum(k), sum(v) FROM t")).isEqualTo(expected);
      assertThat(rowOf(setup, "SELECT count(DISTINCT k) FROM t")).containsExactly(expected.get(0));
    }
  }

  private static void run(ThallusClient client, String sql) {
    try (ThallusStream stream = client.query(sql)) {
      while (stream.hasNext()) {
        stream.next().close();
      }
    }
  }

  private static long count(ThallusClient client) {
    return rowOf(client, "SELECT count(*) FROM t").get(0);
  }

  private static List<Long> rowOf(ThallusClient client, String sql) {
    try (ThallusStream stream = client.query(sql); VectorSchemaRoot row = stream.next()) {
      List<Long> values = new ArrayList<>();
      for (int c = 0; c < row.getFieldVectors().size(); c++) {
        values.add(((Number) row.getVector(c).getObject(0)).longValue());
      }
      return values;
    }
  }

  private static List<Long> plainDuckDB(String sql) throws Exception {
    try (var connection = DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = connection.createStatement();
         ResultSet row = statement.executeQuery(sql)) {
      row.next();
      List<Long> values = new ArrayList<>();
      for (int c = 1; c <= row.getMetaData().getColumnCount(); c++) {
        values.add(row.getLong(c));
      }
      return values;
    }
  }

  /** Batch b of the rows k = b * BATCH_ROWS + i, v = 3k, written from one root. */
  private static final class Batches implements AutoCloseable {
    final VectorSchemaRoot root;

    Batches(BufferAllocator allocator) {
      root = VectorSchemaRoot.of(new BigIntVector("k", allocator), new BigIntVector("v", allocator));
    }

    void write(ThallusIngest ingest, int first, int count) {
      BigIntVector k = (BigIntVector) root.getVector(0);
      BigIntVector v = (BigIntVector) root.getVector(1);
      for (int b = first; b < first + count; b++) {
        // New buffers for each batch: a transport may still read the last ones (cma reads them in place).
        k.allocateNew(BATCH_ROWS);
        v.allocateNew(BATCH_ROWS);
        for (int i = 0; i < BATCH_ROWS; i++) {
          long key = (long) b * BATCH_ROWS + i;
          k.set(i, key);
          v.set(i, 3 * key);
        }
        root.setRowCount(BATCH_ROWS);
        ingest.write(root);
      }
    }

    @Override
    public void close() {
      root.close();
    }
  }
}
