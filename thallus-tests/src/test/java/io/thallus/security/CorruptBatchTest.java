package io.thallus.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.IngestMode;
import io.thallus.IngestRequest;
import io.thallus.Location;
import io.thallus.QueryRequest;
import io.thallus.StatusCode;
import io.thallus.ThallusClient;
import io.thallus.ThallusException;
import io.thallus.ThallusIngest;
import io.thallus.ThallusStream;
import io.thallus.cli.ThallusCli;
import io.thallus.internal.batch.BatchLayouts;
import io.thallus.internal.client.IngestState;
import io.thallus.spi.BatchContents;
import io.thallus.testing.ChildJvm;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.flight.sql.impl.FlightSql;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A client that skips its own check and sends batches that lie (string offsets that jump past the body, go negative
 * or go backwards, a dictionary index past its dictionary, a row count the buffers do not carry), on every transport,
 * inside the frame (small) and outside it (over 32 KiB): each ingest fails with INVALID_ARGUMENT naming the column,
 * the table keeps its rows, and the server answers the next query. The server runs in a JVM of its own, so a server
 * that reads such a batch and crashes fails the test instead of ending the test run.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class CorruptBatchTest {
  /** 3,000 rows make an out-of-line body (over 32 KiB) for either table, 2 rows an inline one. */
  private static final int BIG = 3_000;

  private ChildJvm serve;
  private Path temp;
  private int port;
  private int flightPort;
  private BufferAllocator allocator;

  @BeforeAll
  void startServer(@TempDir Path temp) throws Exception {
    Path root = Files.createDirectories(temp.resolve("data"));
    serve = ChildJvm.start(ThallusCli.class, "serve", "--data-root", root.toString(), "--port", "0",
        "--transports", "tcp,shm,cma,ipc", "--database", temp.resolve("db.duckdb").toString(),
        "--flight-sql-port", "0");
    String serving = serve.awaitLine("thallus serving", 60);
    String flight = serve.awaitLine("flight sql at ", 30);
    flightPort = Integer.parseInt(flight.substring(flight.lastIndexOf(':') + 1).strip());
    this.temp = temp;
    String location = serving.substring(serving.indexOf("thallus://") + "thallus://".length(),
        serving.indexOf(" over ")).replaceAll("[?/].*", "");
    port = Integer.parseInt(location.substring(location.lastIndexOf(':') + 1));
    allocator = new RootAllocator();
    try (ThallusClient client = connect("tcp")) {
      run(client, "CREATE TABLE t (id BIGINT, s VARCHAR)");
      run(client, "INSERT INTO t VALUES (1, 'kept')");
    }
  }

  @AfterAll
  void stopServer() throws Exception {
    try {
      if (serve != null) {
        serve.close();
      }
    } finally {
      if (allocator != null) {
        allocator.close();
      }
    }
  }

  private ThallusClient connect(String transport) {
    return ThallusClient.connect(allocator, Location.of("127.0.0.1", port).withTransport(transport));
  }

  private static long run(ThallusClient client, String sql) {
    try (ThallusStream stream = client.query(sql)) {
      long first = -1;
      while (stream.hasNext()) {
        try (VectorSchemaRoot root = stream.next()) {
          if (first < 0 && root.getRowCount() > 0 && root.getVector(0) instanceof BigIntVector longs) {
            first = longs.get(0);
          }
        }
      }
      return first;
    }
  }

  /** How a corrupt batch lies, and the refusal the server must answer with. */
  private enum Lie {
    OFFSETS_JUMP_PAST_THE_BODY("column \"s\": last offset"),
    OFFSET_GOES_NEGATIVE("column \"s\": offset 1 (-8) is below offset 0 (0)"),
    OFFSETS_GO_BACKWARDS("column \"s\": offset 2 (4) is below offset 1"),
    ROW_COUNT_OVER_THE_BUFFERS("column \"id\": validity buffer has"),
    INDEX_PAST_THE_DICTIONARY("column \"s\": row 1 has dictionary index 5, past dictionary 0's 2 values");

    final String refusal;

    Lie(String refusal) {
      this.refusal = refusal;
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"tcp", "shm", "cma", "ipc"})
  void everyLyingBatchIsRefusedNamingItsColumnAndTheServerGoesOn(String transport) throws Exception {
    try (ThallusClient client = connect(transport)) {
      assertThat(client.transport()).isEqualTo(transport);
      for (Lie lie : Lie.values()) {
        for (int rows : new int[] {2, BIG}) {
          assertThatThrownBy(() -> ingestLying(client, lie, rows))
              .as("%s, %d rows, over %s", lie, rows, transport)
              .isInstanceOfSatisfying(ThallusException.class,
                  e -> assertThat(e.status().code()).isEqualTo(StatusCode.INVALID_ARGUMENT))
              .hasMessageContaining(lie.refusal);
        }
      }
      assertThat(run(client, "SELECT count(*) FROM t")).as("the table's rows").isEqualTo(1);
    }
    // A new connection is served: the server is up.
    try (ThallusClient again = connect("tcp")) {
      assertThat(run(again, "SELECT count(*) FROM t WHERE s = 'kept'")).isEqualTo(1);
    }
  }

  /** Strings whose third offset goes back to 4: Arrow's writers send it as it is (they read only the last). */
  private VectorSchemaRoot backwards(int rows) {
    VectorSchemaRoot root = stringRoot(rows);
    ((VarCharVector) root.getVector("s")).getOffsetBuffer().setInt(8, 4);
    return root;
  }

  @Test
  void aLyingFlightDoPutIsRefusedAsInvalidArgument() throws Exception {
    var ingestOptions = FlightSql.CommandStatementIngest.TableDefinitionOptions.newBuilder()
        .setIfNotExist(FlightSql.CommandStatementIngest.TableDefinitionOptions.TableNotExistOption
            .TABLE_NOT_EXIST_OPTION_FAIL)
        .setIfExists(FlightSql.CommandStatementIngest.TableDefinitionOptions.TableExistsOption
            .TABLE_EXISTS_OPTION_APPEND).build();
    try (FlightClient flight = FlightClient.builder(allocator,
            org.apache.arrow.flight.Location.forGrpcInsecure("127.0.0.1", flightPort)).build();
         FlightSqlClient sql = new FlightSqlClient(flight);
         VectorSchemaRoot root = backwards(2)) {
      assertThatThrownBy(() -> sql.executeIngest(root, new FlightSqlClient.ExecuteIngestOptions("t", ingestOptions,
          null, null, Map.of())))
          .isInstanceOfSatisfying(FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT))
          .hasMessageContaining("column \"s\": offset 2 (4) is below offset 1 (20)");
    }
    try (ThallusClient client = connect("tcp")) {
      assertThat(run(client, "SELECT count(*) FROM t")).as("the table's rows").isEqualTo(1);
    }
  }

  /** The root as an Arrow IPC stream, written as it is. */
  private static void writeStream(VectorSchemaRoot root, java.io.OutputStream out) throws java.io.IOException {
    try (ArrowStreamWriter writer = new ArrowStreamWriter(root, null, out)) {
      writer.start();
      writer.writeBatch();
      writer.end();
    }
  }

  @Test
  void lyingRowsOfParametersAreRefusedByTheClientAndTheServer() throws Exception {
    try (VectorSchemaRoot root = backwards(2); ThallusClient client = connect("tcp")) {
      String insert = "INSERT INTO t VALUES (?, ?)";
      assertThatThrownBy(() -> QueryRequest.builder(insert).parameterRows(root))
          .isInstanceOfSatisfying(ThallusException.class,
              e -> assertThat(e.status().code()).isEqualTo(StatusCode.INVALID_ARGUMENT))
          .hasMessageContaining("column \"s\": offset 2 (4) is below offset 1 (20)");
      // A hostile client sends the stream as it is.
      java.io.ByteArrayOutputStream ipc = new java.io.ByteArrayOutputStream();
      writeStream(root, ipc);
      QueryRequest.Builder request = QueryRequest.builder(insert);
      set(request, "parameterRows", ipc.toByteArray());
      set(request, "parameterRowCount", 2);
      assertThatThrownBy(() -> {
        try (ThallusStream stream = client.query(request.build())) {
          while (stream.hasNext()) {
            stream.next().close();
          }
        }
      }).isInstanceOfSatisfying(ThallusException.class,
              e -> assertThat(e.status().code()).isEqualTo(StatusCode.INVALID_ARGUMENT))
          .hasMessageContaining("column \"s\": offset 2 (4) is below offset 1 (20)");
      assertThat(run(client, "SELECT count(*) FROM t")).as("the table's rows").isEqualTo(1);
    }
  }

  /**
   * A root whose last offset is negative cannot even be unloaded: Arrow fails halfway through and keeps the buffers
   * it had taken. The client refuses it first, naming the column, and holds nothing afterwards (the child allocator
   * closes without a leak).
   */
  @Test
  void aRootArrowCannotUnloadIsRefusedAndNothingIsHeld() throws Exception {
    try (ThallusClient client = connect("tcp")) {
      try (BufferAllocator mine = allocator.newChildAllocator("unloadable", 0, Long.MAX_VALUE)) {
        try (BigIntVector ids = new BigIntVector("id", mine); VarCharVector strings = new VarCharVector("s", mine)) {
          ids.allocateNew(2);
          strings.allocateNew();
          for (int i = 0; i < 2; i++) {
            ids.set(i, 100 + i);
            strings.setSafe(i, ("row " + i).getBytes(StandardCharsets.UTF_8));
          }
          VectorSchemaRoot root = VectorSchemaRoot.of(ids, strings);
          root.setRowCount(2);
          strings.getOffsetBuffer().setInt(8, -8);
          try (ThallusIngest ingest = client.ingest(IngestRequest.of("t", IngestMode.APPEND), root.getSchema())) {
            assertThatThrownBy(() -> ingest.write(root))
                .isInstanceOfSatisfying(ThallusException.class,
                    e -> assertThat(e.status().code()).isEqualTo(StatusCode.INVALID_ARGUMENT))
                .hasMessageContaining("column \"s\": its offsets or length make a buffer end at -8");
          }
          assertThatThrownBy(() -> QueryRequest.builder("INSERT INTO t VALUES (?, ?)").parameterRows(root))
              .isInstanceOfSatisfying(ThallusException.class,
                  e -> assertThat(e.status().code()).isEqualTo(StatusCode.INVALID_ARGUMENT))
              .hasMessageContaining("column \"s\"");
        }
      }
      assertThat(run(client, "SELECT count(*) FROM t")).as("the table's rows").isEqualTo(1);
    }
  }

  private static void set(Object target, String name, Object value) throws ReflectiveOperationException {
    Field field = target.getClass().getDeclaredField(name);
    field.setAccessible(true);
    field.set(target, value);
  }

  @Test
  void thallusLoadOfALyingArrowFileSaysWhichColumnLies() throws Exception {
    Path file = temp.resolve("lying.arrows");
    try (VectorSchemaRoot root = backwards(2); java.io.OutputStream out = Files.newOutputStream(file)) {
      writeStream(root, out);
    }
    try (ChildJvm load = ChildJvm.start(ThallusCli.class, "load", "thallus://127.0.0.1:" + port, "t",
        file.toString(), "--mode", "append")) {
      List<String> exit = load.awaitExit(120);
      assertThat(exit.getFirst()).as("exit code; printed %s", exit).isEqualTo("2");
      assertThat(String.join("\n", exit)).contains("thallus: INVALID_ARGUMENT")
          .contains("column \"s\": offset 2 (4) is below offset 1 (20)");
    }
    try (ThallusClient client = connect("tcp")) {
      assertThat(run(client, "SELECT count(*) FROM t")).as("the table's rows").isEqualTo(1);
    }
  }

  /** Sends one lying batch past the client's own check (as a hostile client would) and finishes the ingest. */
  private void ingestLying(ThallusClient client, Lie lie, int rows) throws Exception {
    boolean dictionary = lie == Lie.INDEX_PAST_THE_DICTIONARY;
    try (VarCharVector words = new VarCharVector("s", allocator)) {
      words.allocateNew();
      words.setSafe(0, "a".getBytes(StandardCharsets.UTF_8));
      words.setSafe(1, "b".getBytes(StandardCharsets.UTF_8));
      words.setValueCount(2);
      Dictionary values = new Dictionary(words, new DictionaryEncoding(0, false, new ArrowType.Int(32, true)));
      DictionaryProvider.MapDictionaryProvider provider = new DictionaryProvider.MapDictionaryProvider(values);
      try (VectorSchemaRoot root = dictionary ? indexRoot(rows) : stringRoot(rows);
           ThallusIngest ingest = dictionary
               ? client.ingest(IngestRequest.of("t", IngestMode.APPEND), root.getSchema(), provider)
               : client.ingest(IngestRequest.of("t", IngestMode.APPEND), root.getSchema())) {
        BatchContents contents = lying(root, lie, dictionary ? words : null);
        assertThat(contents.bufferBytes() > BatchLayouts.INLINE_MAX).isEqualTo(rows == BIG);
        state(ingest).send(contents);
        ingest.finish();
      }
    }
  }

  private VectorSchemaRoot stringRoot(int rows) {
    BigIntVector ids = new BigIntVector("id", allocator);
    VarCharVector strings = new VarCharVector("s", allocator);
    ids.allocateNew(rows);
    strings.allocateNew();
    for (int i = 0; i < rows; i++) {
      ids.set(i, 100 + i);
      strings.setSafe(i, String.format("row %016d", i).getBytes(StandardCharsets.UTF_8));
    }
    VectorSchemaRoot root = VectorSchemaRoot.of(ids, strings);
    root.setRowCount(rows);
    return root;
  }

  private VectorSchemaRoot indexRoot(int rows) {
    BigIntVector ids = new BigIntVector("id", allocator);
    IntVector indices = new IntVector(new org.apache.arrow.vector.types.pojo.Field("s",
        new FieldType(true, new ArrowType.Int(32, true), new DictionaryEncoding(0, false,
            new ArrowType.Int(32, true))), null), allocator);
    ids.allocateNew(rows);
    indices.allocateNew(rows);
    for (int i = 0; i < rows; i++) {
      ids.set(i, 100 + i);
      indices.set(i, i % 2);
    }
    VectorSchemaRoot root = new VectorSchemaRoot(List.of(ids, indices));
    root.setRowCount(rows);
    return root;
  }

  /** The root's batch with the lie written into it (and the dictionary, for an encoded column). */
  private static BatchContents lying(VectorSchemaRoot root, Lie lie, VarCharVector dictionary) {
    List<ArrowDictionaryBatch> dictionaries = new ArrayList<>();
    if (dictionary != null) {
      // Not closed: the vector stays the caller's.
      VectorSchemaRoot one = new VectorSchemaRoot(List.of(dictionary));
      dictionaries.add(new ArrowDictionaryBatch(0, new VectorUnloader(one).getRecordBatch(), false));
    }
    ArrowRecordBatch records = new VectorUnloader(root).getRecordBatch();
    // Buffers: id validity, id values, s validity, s offsets, s data.
    ArrowBuf offsets = records.getBuffers().size() > 3 ? records.getBuffers().get(3) : null;
    switch (lie) {
      case OFFSETS_JUMP_PAST_THE_BODY -> {
        int rows = root.getRowCount();
        offsets.setInt(rows * 4L, offsets.getInt(rows * 4L) + 4096);
      }
      case OFFSET_GOES_NEGATIVE -> offsets.setInt(4, -8);
      case OFFSETS_GO_BACKWARDS -> offsets.setInt(8, 4);
      case ROW_COUNT_OVER_THE_BUFFERS -> {
        List<ArrowFieldNode> nodes = new ArrayList<>();
        for (ArrowFieldNode node : records.getNodes()) {
          nodes.add(new ArrowFieldNode(node.getLength() + 1_000_000, node.getNullCount()));
        }
        ArrowRecordBatch claiming = new ArrowRecordBatch(records.getLength() + 1_000_000, nodes,
            records.getBuffers());
        records.close();
        records = claiming;
      }
      case INDEX_PAST_THE_DICTIONARY -> records.getBuffers().get(3).setInt(4, 5);
      default -> throw new IllegalStateException(lie.toString());
    }
    return new BatchContents(dictionaries, records);
  }

  /** The ingest's sending end, below the client's check of what it sends. */
  private static IngestState state(ThallusIngest ingest) throws ReflectiveOperationException {
    Field field = ThallusIngest.class.getDeclaredField("state");
    field.setAccessible(true);
    return (IngestState) field.get(ingest);
  }
}
