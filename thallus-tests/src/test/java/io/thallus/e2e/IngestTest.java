package io.thallus.e2e;

import static io.thallus.testing.Memory.awaitZero;
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
import io.thallus.server.ThallusServer;
import io.thallus.ThallusStream;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.testing.ChildJvm;
import io.thallus.testing.IngestingClientMain;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The write path's errors, each with a clear message and nothing left behind: the table as it was, memory back to
 * zero. (What ingests write, for every type and transport, is the conformance suite's.)
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class IngestTest {
  private BufferAllocator allocator;
  private ThallusServer server;
  private ThallusClient client;

  @BeforeEach
  void start() {
    allocator = new RootAllocator();
    server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create()).build().start();
    client = ThallusClient.connect(allocator, server.getLocation());
  }

  @AfterEach
  void stop() {
    try {
      if (client != null) {
        client.close();
      }
    } finally {
      try {
        server.close();
      } finally {
        allocator.close();
      }
    }
  }

  private void run(ThallusClient on, String sql) {
    on.query(sql).close();
  }

  private static List<Object> row(ThallusClient on, String sql) {
    try (ThallusStream stream = on.query(sql)) {
      List<Object> values = new ArrayList<>();
      try (VectorSchemaRoot root = stream.next()) {
        root.getFieldVectors().forEach(v -> values.add(v.getObject(0) == null ? null : v.getObject(0).toString()));
      }
      return values;
    }
  }

  /** A batch of {@code rows} rows: id BIGINT (0..rows-1), name VARCHAR. */
  private VectorSchemaRoot batch(int rows) {
    BigIntVector id = new BigIntVector("id", allocator);
    VarCharVector name = new VarCharVector("name", allocator);
    id.allocateNew(rows);
    name.allocateNew(rows);
    for (int i = 0; i < rows; i++) {
      id.set(i, i);
      name.setSafe(i, ("n" + i).getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }
    VectorSchemaRoot root = VectorSchemaRoot.of(id, name);
    root.setRowCount(rows);
    return root;
  }

  private IngestResult ingest(ThallusClient on, String table, IngestMode mode, VectorSchemaRoot root) {
    try (ThallusIngest ingest = on.ingest(IngestRequest.of(table, mode), root.getSchema())) {
      ingest.write(root);
      return ingest.finish();
    }
  }

  @Test
  void appendToAnUnknownTableNamesIt() throws InterruptedException {
    try (VectorSchemaRoot root = batch(10)) {
      assertThatThrownBy(() -> ingest(client, "nowhere", IngestMode.APPEND, root))
          .isInstanceOfSatisfying(ThallusException.class, e -> assertThat(e.code()).isEqualTo(StatusCode.NOT_FOUND))
          .hasMessageContaining("table nowhere does not exist").hasMessageContaining("mode create");
    }
    awaitZero(() -> server.memoryUse().connectionBytes(), "connection memory");
  }

  @Test
  void createOverAnExistingTableSaysSoAndLeavesIt() {
    run(client, "CREATE TABLE taken AS SELECT 1 AS id, 'x' AS name");
    try (VectorSchemaRoot root = batch(10)) {
      assertThatThrownBy(() -> ingest(client, "taken", IngestMode.CREATE, root))
          .isInstanceOfSatisfying(ThallusException.class,
              e -> assertThat(e.code()).isEqualTo(StatusCode.ALREADY_EXISTS))
          .hasMessageContaining("table taken exists already");
    }
    assertThat(row(client, "SELECT count(*), max(name) FROM taken")).containsExactly("1", "x");
  }

  @Test
  void aColumnOfAnotherTypeIsNamedWithBothTypes() {
    run(client, "CREATE TABLE typed (id BIGINT, name INTEGER)");
    try (VectorSchemaRoot root = batch(10)) {
      assertThatThrownBy(() -> ingest(client, "typed", IngestMode.APPEND, root))
          .isInstanceOfSatisfying(ThallusException.class,
              e -> assertThat(e.code()).isEqualTo(StatusCode.INVALID_ARGUMENT))
          .hasMessageContaining("column name is VARCHAR in the batches but INTEGER in table typed");
    }
    run(client, "CREATE TABLE other (id BIGINT, label VARCHAR)");
    try (VectorSchemaRoot root = batch(10)) {
      assertThatThrownBy(() -> ingest(client, "other", IngestMode.APPEND, root))
          .hasMessageContaining("column name of the batches is not a column of table other (its columns: id, "
              + "label)");
    }
    assertThat(row(client, "SELECT count(*) FROM typed")).containsExactly("0");
  }

  @Test
  void integersAppendToOtherIntegerColumnsAndOverflowFailsTheWholeIngest() {
    run(client, "CREATE TABLE wide (v BIGINT)");
    IntVector small = new IntVector("v", allocator);
    small.allocateNew(3);
    small.set(0, 1);
    small.set(1, 2);
    small.set(2, Integer.MAX_VALUE);
    try (VectorSchemaRoot root = VectorSchemaRoot.of(small)) {
      root.setRowCount(3);
      assertThat(ingest(client, "wide", IngestMode.APPEND, root).rows()).isEqualTo(3);
      run(client, "CREATE TABLE narrow (v SMALLINT)");
      run(client, "INSERT INTO narrow VALUES (7)");
      // Narrower columns take them too, value by value: one that does not fit fails the whole ingest.
      assertThatThrownBy(() -> ingest(client, "narrow", IngestMode.APPEND, root))
          .isInstanceOf(ThallusException.class).hasMessageContaining("2147483647")
          .hasMessageContaining("out of range");
    }
    assertThat(row(client, "SELECT count(*), sum(v) FROM narrow")).containsExactly("1", "7");
    assertThat(row(client, "SELECT count(*), sum(v) FROM wide")).containsExactly("3", String.valueOf(3L
        + Integer.MAX_VALUE));
  }

  @Test
  void aCreatedTableIsVisibleThroughJdbcMetadataWithItsColumns() throws Exception {
    try (VectorSchemaRoot root = batch(25)) {
      assertThat(ingest(client, "made_here", IngestMode.CREATE, root).rows()).isEqualTo(25);
    }
    String url = "jdbc:thallus://127.0.0.1:" + server.getLocation().port();
    try (java.sql.Connection jdbc = java.sql.DriverManager.getConnection(url)) {
      try (java.sql.ResultSet tables = jdbc.getMetaData().getTables(null, null, "made_here", null)) {
        assertThat(tables.next()).isTrue();
        assertThat(tables.getString("TABLE_TYPE")).isEqualTo("TABLE");
      }
      List<String> columns = new ArrayList<>();
      try (java.sql.ResultSet described = jdbc.getMetaData().getColumns(null, null, "made_here", null)) {
        while (described.next()) {
          columns.add(described.getString("COLUMN_NAME") + " " + described.getString("TYPE_NAME"));
        }
      }
      assertThat(columns).containsExactly("id BIGINT", "name VARCHAR");
      try (java.sql.Statement statement = jdbc.createStatement();
           java.sql.ResultSet sum = statement.executeQuery("SELECT count(*), sum(id) FROM made_here")) {
        sum.next();
        assertThat(sum.getLong(1)).isEqualTo(25);
        assertThat(sum.getLong(2)).isEqualTo(300);
      }
    }
  }

  @Test
  void aBadTableNameIsRefusedBeforeAnythingIsSent() {
    assertThatThrownBy(() -> IngestRequest.of("t; DROP TABLE x", IngestMode.CREATE))
        .isInstanceOfSatisfying(ThallusException.class,
            e -> assertThat(e.code()).isEqualTo(StatusCode.INVALID_ARGUMENT))
        .hasMessageContaining("is not a table name");
  }

  @Test
  void anIngestInTheSessionsTransactionIsVisibleOnlyAfterCommitAndGoneAfterRollback() {
    run(client, "CREATE TABLE tx (id BIGINT, name VARCHAR)");
    try (VectorSchemaRoot root = batch(1000);
         ThallusClient other = ThallusClient.connect(allocator, server.getLocation())) {
      IngestRequest inTransaction = IngestRequest.builder("tx").mode(IngestMode.APPEND).autoCommit(false).build();
      try (ThallusIngest ingest = client.ingest(inTransaction, root.getSchema())) {
        ingest.write(root);
        assertThat(ingest.finish().rows()).isEqualTo(1000);
      }
      assertThat(row(client, "SELECT count(*) FROM tx")).containsExactly("1000");
      assertThat(row(other, "SELECT count(*) FROM tx")).containsExactly("0");
      run(client, "ROLLBACK");
      assertThat(row(client, "SELECT count(*) FROM tx")).containsExactly("0");
      try (ThallusIngest ingest = client.ingest(inTransaction, root.getSchema())) {
        ingest.write(root);
        ingest.finish();
      }
      run(client, "COMMIT");
      assertThat(row(other, "SELECT count(*), sum(id) FROM tx")).containsExactly("1000", "499500");
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"tcp", "shm", "cma"})
  void aBatchOverTheClientsBudgetFailsTheIngestAndLeavesTheTable(String transport) throws InterruptedException {
    long budget = 8L << 20;
    try (BufferAllocator memory = new RootAllocator();
         ThallusServer small = ThallusServer.builder(memory, Location.of("127.0.0.1", 0), DuckDBEngine.create())
             .memoryPerClient(budget).build().start();
         ThallusClient on = ThallusClient.connect(allocator, small.getLocation().withTransport(transport))) {
      run(on, "CREATE TABLE big (id BIGINT, name VARCHAR)");
      try (VectorSchemaRoot root = batch(1_000_000)) { // about 15 MB: over the 8 MiB budget
        assertThatThrownBy(() -> ingest(on, "big", IngestMode.APPEND, root))
            .isInstanceOfSatisfying(ThallusException.class,
                e -> assertThat(e.code()).as(e.getMessage()).isEqualTo(StatusCode.RESOURCE_EXHAUSTED));
      }
      assertThat(row(on, "SELECT count(*) FROM big")).containsExactly("0");
      awaitZero(() -> small.memoryUse().connectionBytes(), "connection memory after the refused batch");
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"shm", "cma", "tcp"})
  void aClientKilledMidIngestLeavesTheTableAsItWasAndNothingOnTheServer(String transport) throws Exception {
    clientKilledMidIngest(transport);
  }

  /** A client process killed after sending some batches of an append: the table is as it was. Also run for rdma. */
  static void clientKilledMidIngest(String transport) throws Exception {
    try (BufferAllocator memory = new RootAllocator();
         ThallusServer server = ThallusServer.builder(memory, Location.of("127.0.0.1", 0), DuckDBEngine.create())
             .build().start();
         ThallusClient client = ThallusClient.connect(memory, server.getLocation())) {
      client.query("CREATE TABLE steady AS SELECT i AS v FROM range(5) t(i)").close();
      try (ChildJvm child = ChildJvm.start(IngestingClientMain.class,
          server.getLocation().withTransport(transport).toString(), "steady", "3")) {
        assertThat(child.awaitLine("INGESTING", 60)).isEqualTo("INGESTING 3 over " + transport);
        child.kill();
      }
      awaitZero(() -> server.memoryUse().connectionBytes(), "connection memory after the client was killed");
      assertThat(row(client, "SELECT count(*), sum(v) FROM steady")).containsExactly("5", "10");
      // The server goes on serving, and the table takes a proper ingest.
      BigIntVector values = new BigIntVector("v", memory);
      values.allocateNew(4);
      for (int i = 0; i < 4; i++) {
        values.set(i, 100 + i);
      }
      try (VectorSchemaRoot root = VectorSchemaRoot.of(values)) {
        root.setRowCount(4);
        try (ThallusIngest ingest = client.ingest(IngestRequest.of("steady", IngestMode.APPEND), root.getSchema())) {
          ingest.write(root);
          assertThat(ingest.finish().rows()).isEqualTo(4);
        }
      }
      assertThat(row(client, "SELECT count(*), sum(v) FROM steady")).containsExactly("9", "416");
    }
  }

  @Test
  void aReadOnlyDatabaseRefusesIngests(@TempDir Path folder) {
    Path file = folder.resolve("ro.duckdb");
    try (DuckDBEngine writable = DuckDBEngine.builder().database(file).build()) {
      writable.execute(new io.thallus.engine.QuerySpec("CREATE TABLE t (id BIGINT, name VARCHAR)",
          java.util.Optional.empty(), 1024, java.util.Map.of()), allocator).close();
    }
    try (BufferAllocator memory = new RootAllocator();
         ThallusServer readOnly = ThallusServer.builder(memory, Location.of("127.0.0.1", 0),
                 DuckDBEngine.builder().database(file).readOnly(true).build()).build().start();
         ThallusClient on = ThallusClient.connect(allocator, readOnly.getLocation());
         VectorSchemaRoot root = batch(10)) {
      assertThatThrownBy(() -> ingest(on, "t", IngestMode.APPEND, root))
          .isInstanceOfSatisfying(ThallusException.class,
              e -> assertThat(e.code()).isEqualTo(StatusCode.PERMISSION_DENIED))
          .hasMessageContaining("read-only");
    }
  }
}
