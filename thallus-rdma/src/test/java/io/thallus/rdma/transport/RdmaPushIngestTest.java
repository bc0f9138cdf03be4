package io.thallus.rdma.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.IngestMode;
import io.thallus.IngestRequest;
import io.thallus.IngestResult;
import io.thallus.Location;
import io.thallus.StatusCode;
import io.thallus.ThallusClient;
import io.thallus.ThallusException;
import io.thallus.ThallusIngest;
import io.thallus.ThallusStream;
import io.thallus.conformance.Collected;
import io.thallus.conformance.DuckDBReference;
import io.thallus.conformance.TypeTable;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import io.thallus.testing.ChildJvm;
import io.thallus.testing.Memory;
import java.io.IOException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.function.Function;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * rdma's ingest by RDMA WRITE end to end: a server and clients in this process on the guest's rxe0, the client's
 * transfer and the server's ring set by their system properties ({@link IngestTransfer#PROPERTY},
 * {@link RdmaTransport#PUSH_RING_BYTES_PROPERTY}). Values are compared with what DuckDB makes of the same query
 * directly; the ring is small (1 MiB) so that bodies cross its end again and again. Runs in the Soft-RoCE guest
 * through RxeGuestTest.
 */
@Tag("rdma-device")
class RdmaPushIngestTest {
  private static final int RING = 1 << 20;
  private static final String WIDE = "SELECT i AS a, i * 2 AS b, i * 3 AS c, i * 5 AS d, i * 7 AS e, i * 11 AS f,"
      + " i * 13 AS g, i * 17 AS h FROM range(%d, %d) t(i)";
  private static final String WIDE_CHECK = "SELECT count(*), sum(a), sum(b), sum(h), sum(hash(a, c, e, g)) FROM ";

  private BufferAllocator allocator;
  private ThallusServer server;
  /** The settings this JVM was started with (a guest run may set them for every test): put back after each test. */
  private String transferBefore;
  private String ringBefore;

  @BeforeEach
  void allocator() {
    allocator = new RootAllocator();
    transferBefore = System.getProperty(IngestTransfer.PROPERTY);
    ringBefore = System.getProperty(RdmaTransport.PUSH_RING_BYTES_PROPERTY);
  }

  private static void restore(String property, String value) {
    if (value == null) {
      System.clearProperty(property);
    } else {
      System.setProperty(property, value);
    }
  }

  @AfterEach
  void close() {
    if (server != null) {
      server.close();
    }
    allocator.close();
    restore(IngestTransfer.PROPERTY, transferBefore);
    restore(RdmaTransport.PUSH_RING_BYTES_PROPERTY, ringBefore);
  }

  private void startServer(int ringBytes) {
    System.setProperty(RdmaTransport.PUSH_RING_BYTES_PROPERTY, Integer.toString(ringBytes));
    server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create())
        .transports(List.of("rdma")).build().start();
  }

  /** A client whose ingests go by {@code transfer} (the property is read as the client connects). */
  private ThallusClient connect(IngestTransfer transfer) {
    System.setProperty(IngestTransfer.PROPERTY, transfer.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-'));
    return ThallusClient.connect(allocator, server.getLocation().withTransport("rdma"));
  }

  /** DuckDB's own batches of {@code sql}, made in this process, as a client would hold them. */
  private <T> T batches(String sql, int batchRows, Function<ArrowReader, T> use) {
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = duckdb.createStatement();
         ResultSet resultSet = statement.executeQuery(sql);
         ArrowReader reader = (ArrowReader) ((org.duckdb.DuckDBResultSet) resultSet)
             .arrowExportStream(allocator, batchRows)) {
      return use.apply(reader);
    } catch (SQLException | IOException e) {
      throw new AssertionError("reference query failed: " + e.getMessage(), e);
    }
  }

  private static List<List<Object>> rows(ThallusClient client, String sql) {
    try (ThallusStream stream = client.query(sql)) {
      return Collected.fromIterator(stream).rows();
    }
  }

  @Test
  void everyTypeAndBodiesAcrossTheRingsEndIngestEqualByWrite() {
    startServer(RING);
    try (ThallusClient client = connect(IngestTransfer.WRITE)) {
      String typed = TypeTable.sql(5000);
      IngestResult written = batches(typed, 1024, r -> client.ingest(IngestRequest.of("typed", IngestMode.CREATE), r));
      assertThat(written.rows()).isEqualTo(5000);
      assertThat(written.transport()).isEqualTo("rdma");
      assertThat(rows(client, "SELECT * FROM typed ORDER BY row_id")).isEqualTo(DuckDBReference.run(
          "SELECT * REPLACE (c_enum::VARCHAR AS c_enum) FROM (" + typed + ") ORDER BY row_id", 1024).rows());

      // 384,000-byte bodies: the third of each round skips the ring's tail and starts again at 0.
      String wide = WIDE.formatted(0, 300_000);
      batches(wide, 6000, r -> client.ingest(IngestRequest.of("wide", IngestMode.CREATE), r));
      assertThat(rows(client, WIDE_CHECK + "wide")).isEqualTo(DuckDBReference.run(WIDE_CHECK + "(" + wide + ")",
          1024).rows());

      // Bodies of every size from about 40 KB to 700 KB, strings and doubles.
      String text = "SELECT i, repeat('x', (i % 197)::INTEGER) AS s, i / 3 AS d FROM range(200000) t(i)";
      String textCheck = "SELECT count(*), sum(i), sum(hash(s)), sum(d) FROM ";
      for (int batchRows : List.of(700, 3000, 7000)) {
        batches(text, batchRows, r -> client.ingest(IngestRequest.of("text", IngestMode.REPLACE), r));
        assertThat(rows(client, textCheck + "text")).as(batchRows + "-row batches")
            .isEqualTo(DuckDBReference.run(textCheck + "(" + text + ")", 1024).rows());
      }
    }
  }

  @Test
  void bySizeWritesSmallBodiesAndReadsLargeOnesInOneIngest() throws IOException {
    startServer(RING);
    try (ThallusClient client = connect(IngestTransfer.BY_SIZE)) {
      // 4000 rows of 8 BIGINTs (256 KB) fit half the ring and are written; 32768 rows (2 MiB) are read.
      String small = WIDE.formatted(0, 100_000);
      String large = WIDE.formatted(100_000, 100_000 + 32768 * 5);
      batches(small, 4000, smallBatches -> batches(large, 32768, largeBatches -> {
        try (ThallusIngest ingest = client.ingest(IngestRequest.of("mixed", IngestMode.CREATE),
            smallBatches.getVectorSchemaRoot().getSchema())) {
          boolean more = true;
          while (more) {
            more = false;
            for (ArrowReader reader : List.of(smallBatches, largeBatches, smallBatches)) {
              if (reader.loadNextBatch()) {
                ingest.write(reader.getVectorSchemaRoot());
                more = true;
              }
            }
          }
          return ingest.finish();
        } catch (IOException e) {
          throw new AssertionError(e);
        }
      }));
      assertThat(rows(client, WIDE_CHECK + "mixed")).isEqualTo(DuckDBReference.run(WIDE_CHECK + "(" + small
          + " UNION ALL " + large + ")", 1024).rows());
    }
  }

  @Test
  void writeRefusesABodyLargerThanTheRingNamingBothAndTheConnectionGoesOn() {
    startServer(256 << 10);
    try (ThallusClient client = connect(IngestTransfer.WRITE)) {
      String wide = WIDE.formatted(0, 200_000);
      assertThatThrownBy(() -> batches(wide, 65536, r -> client.ingest(IngestRequest.of("big", IngestMode.CREATE),
          r))).isInstanceOfSatisfying(ThallusException.class,
              e -> assertThat(e.code()).isEqualTo(StatusCode.RESOURCE_EXHAUSTED))
          .hasMessageContaining("does not fit the server's push ring of 262144 bytes");
      assertThat(rows(client, "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'big'"))
          .containsExactly(List.of(0L));
      batches(wide, 2000, r -> client.ingest(IngestRequest.of("small", IngestMode.CREATE), r));
      assertThat(rows(client, WIDE_CHECK + "small")).isEqualTo(DuckDBReference.run(WIDE_CHECK + "(" + wide + ")",
          1024).rows());
    }
  }

  @Test
  void aClientKilledMidPushLeavesTheTableAsItWasAndTheServerServesOn() throws Exception {
    startServer(RING);
    try (ThallusClient client = connect(IngestTransfer.WRITE)) {
      client.query("CREATE TABLE steady AS SELECT i AS v FROM range(5) t(i)").close();
      try (ChildJvm child = ChildJvm.start(PushingClientMain.class,
          server.getLocation().withTransport("rdma").toString(), "steady", "3", "write")) {
        assertThat(child.awaitLine("INGESTING", 120)).isEqualTo("INGESTING 3 over rdma by write");
        child.kill();
      }
      Memory.awaitZero(() -> server.memoryUse().connectionBytes(), "connection memory after the client was killed");
      assertThat(rows(client, "SELECT count(*), sum(v)::BIGINT FROM steady")).containsExactly(List.of(5L, 10L));
      String more = "SELECT (100 + i) AS v FROM range(100000) t(i)";
      batches(more, 4000, r -> client.ingest(IngestRequest.of("steady", IngestMode.APPEND), r));
      assertThat(rows(client, "SELECT count(*) FROM steady")).containsExactly(List.of(100_005L));
    }
  }

  @Test
  void withoutARingWriteFailsNamingItAndBySizeReads() {
    startServer(0);
    String wide = WIDE.formatted(0, 50_000);
    try (ThallusClient client = connect(IngestTransfer.WRITE)) {
      assertThatThrownBy(() -> batches(wide, 4000, r -> client.ingest(IngestRequest.of("none", IngestMode.CREATE),
          r))).isInstanceOf(ThallusException.class).hasMessageContaining("the server offered no push ring");
    }
    try (ThallusClient client = connect(IngestTransfer.BY_SIZE)) {
      batches(wide, 4000, r -> client.ingest(IngestRequest.of("read", IngestMode.CREATE), r));
      assertThat(rows(client, WIDE_CHECK + "read")).isEqualTo(DuckDBReference.run(WIDE_CHECK + "(" + wide + ")",
          1024).rows());
    }
  }
}
