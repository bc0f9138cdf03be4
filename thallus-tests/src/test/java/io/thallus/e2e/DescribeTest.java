package io.thallus.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.DatasetDescription;
import io.thallus.DatasetDescription.FilePart;
import io.thallus.DatasetDescription.Kind;
import io.thallus.DatasetDescription.RowRange;
import io.thallus.Location;
import io.thallus.QueryRequest;
import io.thallus.StatusCode;
import io.thallus.ThallusClient;
import io.thallus.ThallusException;
import io.thallus.ThallusStream;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * DESCRIBE against a real server and DuckDB: every figure of an answer (kind, column names and types, each part's
 * rows, sizes and row groups) is compared with DuckDB run directly over the same database file and files.
 */
class DescribeTest {
  @TempDir
  static Path data;
  @TempDir
  static Path databaseFolder;

  private static final int TABLE_ROWS = 300_000;
  private static BufferAllocator allocator;
  private static ThallusServer server;
  private static ThallusClient client;
  private static Path database;
  /** DuckDB's own answers, read before the server opened the files. */
  private static Map<String, List<String>> describeNames = new LinkedHashMap<>();
  private static Map<String, List<String>> describeTypes = new LinkedHashMap<>();
  private static final List<long[]> tableRanges = new ArrayList<>();

  @BeforeAll
  static void writeDataAndStart() throws Exception {
    database = databaseFolder.resolve("served.duckdb");
    Files.createDirectories(data.resolve("pq"));
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:" + database);
         Statement statement = duckdb.createStatement()) {
      statement.execute("CREATE TABLE numbers AS SELECT i AS id, i % 7 AS k, 'v' || i AS v, i * 0.5 AS half, "
          + "DATE '2024-01-01' + (i % 365)::INTEGER AS day FROM range(" + TABLE_ROWS + ") t(i)");
      // Deleted rows leave rowids without rows: a range's rows are fewer than it is wide.
      statement.execute("DELETE FROM numbers WHERE id % 10 = 3");
      statement.execute("CREATE VIEW numbers_view AS SELECT id, v FROM numbers WHERE k = 1");
      statement.execute("CREATE TABLE empty_table (a INTEGER, b VARCHAR)");
      statement.execute("CREATE SCHEMA \"My Schema\"");
      statement.execute("CREATE TABLE \"My Schema\".\"Odd \"\"Name\"\"\" AS SELECT 1 AS x, 'y' AS y");
      statement.execute("CHECKPOINT");
      // Three Parquet files of different row-group sizes, and a CSV file.
      statement.execute("COPY (SELECT * FROM numbers WHERE id < 5000 ORDER BY id) TO '" + data.resolve("pq/a.parquet")
          + "' (FORMAT parquet, ROW_GROUP_SIZE 2048)");
      statement.execute("COPY (SELECT * FROM numbers WHERE id >= 5000 AND id < 6000 ORDER BY id) TO '"
          + data.resolve("pq/b.parquet") + "' (FORMAT parquet)");
      statement.execute("COPY (SELECT * FROM numbers WHERE id >= 6000 AND id < 20000 ORDER BY id) TO '"
          + data.resolve("pq/c.parquet") + "' (FORMAT parquet, ROW_GROUP_SIZE 4096)");
      statement.execute("COPY (SELECT id, v FROM numbers WHERE id < 777) TO '" + data.resolve("small.csv")
          + "' (FORMAT csv, HEADER true)");
    }
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:" + database);
         Statement statement = duckdb.createStatement()) {
      describeDirectly(statement, "numbers", "numbers");
      describeDirectly(statement, "numbers_view", "numbers_view");
      describeDirectly(statement, "pq", "read_parquet('" + data.resolve("pq") + "/**/*.parquet')");
      try (ResultSet rows = statement.executeQuery("SELECT min(rowid), max(rowid) + 1, count(*) FROM numbers "
          + "GROUP BY rowid // 122880 ORDER BY 1")) {
        while (rows.next()) {
          tableRanges.add(new long[] {rows.getLong(1), rows.getLong(2), rows.getLong(3)});
        }
      }
    }
    allocator = new RootAllocator();
    server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0),
        DuckDBEngine.builder().database(database).readOnly(true).filesUnder(data).build()).dataRoot(data).build()
        .start();
    client = ThallusClient.connect(allocator, server.getLocation());
  }

  private static void describeDirectly(Statement statement, String key, String source) throws SQLException {
    List<String> names = new ArrayList<>();
    List<String> types = new ArrayList<>();
    try (ResultSet rows = statement.executeQuery("DESCRIBE SELECT * FROM " + source)) {
      while (rows.next()) {
        names.add(rows.getString("column_name"));
        types.add(rows.getString("column_type"));
      }
    }
    describeNames.put(key, names);
    describeTypes.put(key, types);
  }

  @AfterAll
  static void stop() {
    try {
      client.close();
      server.close();
    } finally {
      allocator.close();
    }
  }

  private static List<String> names(Schema schema) {
    return schema.getFields().stream().map(Field::getName).toList();
  }

  /** The DuckDB type each Arrow field of these tests stands for, as DuckDB's DESCRIBE names it. */
  private static List<String> duckdbTypes(Schema schema) {
    return schema.getFields().stream().map(field -> switch (field.getType()) {
      case ArrowType.Int i when i.getBitWidth() == 64 -> "BIGINT";
      case ArrowType.Utf8 u -> "VARCHAR";
      case ArrowType.Decimal d -> "DECIMAL(" + d.getPrecision() + "," + d.getScale() + ")";
      case ArrowType.Date d -> "DATE";
      default -> field.getType().toString();
    }).toList();
  }

  /** The schema the server's own query over {@code source} answers. */
  private static Schema querySchema(String sql, String dataset) {
    QueryRequest.Builder request = QueryRequest.builder(sql);
    if (!dataset.isEmpty()) {
      request.dataset(dataset);
    }
    return client.schema(request.build());
  }

  @Test
  void aTableIsItsRowGroupsRowIdRanges() {
    DatasetDescription table = client.describe("numbers");
    assertThat(table.kind()).isEqualTo(Kind.TABLE);
    assertThat(names(table.schema())).isEqualTo(describeNames.get("numbers"));
    assertThat(duckdbTypes(table.schema())).isEqualTo(describeTypes.get("numbers"));
    assertThat(table.schema()).isEqualTo(querySchema("SELECT * FROM numbers", ""));
    assertThat(table.parts()).hasSize(tableRanges.size()).hasSize(3);
    for (int i = 0; i < tableRanges.size(); i++) {
      RowRange range = (RowRange) table.parts().get(i);
      long[] direct = tableRanges.get(i);
      assertThat(new long[] {range.firstRowId(), range.endRowId(), range.rows()}).as("range " + i)
          .containsExactly(direct);
      assertThat(range.rows()).isLessThan(range.endRowId() - range.firstRowId());
      // Each range is what a reader of those rowids gets.
      assertThat(count("SELECT count(*) FROM numbers WHERE rowid >= " + range.firstRowId() + " AND rowid < "
          + range.endRowId(), "")).isEqualTo(range.rows());
      // BIGINT 8, BIGINT 8, VARCHAR counted 16, DECIMAL(21,1) 16, DATE 4.
      assertThat(range.bytes()).isEqualTo(range.rows() * (8 + 8 + 16 + 16 + 4));
    }
    assertThat(table.rows()).isEqualTo(TABLE_ROWS - TABLE_ROWS / 10);
  }

  @Test
  void qualifiedQuotedAndCaseFoldedNamesFindTheSameTable() {
    DatasetDescription plain = client.describe("numbers");
    assertThat(client.describe("main.numbers")).isEqualTo(plain);
    assertThat(client.describe("served.main.numbers")).isEqualTo(plain);
    assertThat(client.describe("\"main\".\"numbers\"")).isEqualTo(plain);
    assertThat(client.describe("NUMBERS")).isEqualTo(plain);
    DatasetDescription odd = client.describe("\"My Schema\".\"Odd \"\"Name\"\"\"");
    assertThat(odd.kind()).isEqualTo(Kind.TABLE);
    assertThat(names(odd.schema())).containsExactly("x", "y");
    assertThat(odd.rows()).isEqualTo(1);
  }

  @Test
  void anEmptyTableHasNoParts() {
    DatasetDescription empty = client.describe("empty_table");
    assertThat(empty.kind()).isEqualTo(Kind.TABLE);
    assertThat(empty.parts()).isEmpty();
    assertThat(names(empty.schema())).containsExactly("a", "b");
  }

  @Test
  void aViewIsItsSchemaWithoutParts() {
    DatasetDescription view = client.describe("numbers_view");
    assertThat(view.kind()).isEqualTo(Kind.VIEW);
    assertThat(view.parts()).isEmpty();
    assertThat(names(view.schema())).isEqualTo(describeNames.get("numbers_view"));
    assertThat(duckdbTypes(view.schema())).isEqualTo(describeTypes.get("numbers_view"));
    assertThat(view.schema()).isEqualTo(querySchema("SELECT * FROM numbers_view", ""));    // DuckDB's own catalog views are views too.
    DatasetDescription tables = client.describe("information_schema.tables");
    assertThat(tables.kind()).isEqualTo(Kind.VIEW);
    assertThat(names(tables.schema())).contains("table_name");
  }

  @Test
  void aSessionsTemporaryTableIsFoundFirst() {
    try (ThallusClient own = ThallusClient.connect(allocator, server.getLocation())) {
      run(own, "CREATE TEMP TABLE numbers AS SELECT 1 AS only_column");
      DatasetDescription temp = own.describe("numbers");
      assertThat(names(temp.schema())).containsExactly("only_column");
      assertThat(temp.rows()).isEqualTo(1);
    }
    // Other sessions still see the database's table.
    assertThat(names(client.describe("numbers").schema())).isEqualTo(describeNames.get("numbers"));
  }

  @Test
  void aParquetDatasetIsItsFilesWithSizesRowsAndRowGroups() throws Exception {
    DatasetDescription files = client.describe("dataset", "pq");
    assertThat(files.kind()).isEqualTo(Kind.FILES);
    assertThat(names(files.schema())).isEqualTo(describeNames.get("pq"));
    assertThat(duckdbTypes(files.schema())).isEqualTo(describeTypes.get("pq"));
    assertThat(files.schema()).isEqualTo(querySchema("SELECT * FROM dataset", "pq"));
    assertThat(files.parts()).extracting(p -> Path.of(((FilePart) p).path()).getFileName().toString())
        .containsExactly("a.parquet", "b.parquet", "c.parquet");
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = duckdb.createStatement()) {
      for (DatasetDescription.Part part : files.parts()) {
        FilePart file = (FilePart) part;
        Path path = Path.of(file.path());
        assertThat(path.toRealPath()).startsWith(data.toRealPath());
        assertThat(file.bytes()).as(file.path()).isEqualTo(Files.size(path));
        assertThat(file.rows()).as(file.path()).isEqualTo(longs(statement,
            "SELECT count(*) FROM read_parquet('" + path + "')").get(0));
        assertThat(file.rowGroupRows()).as(file.path()).isEqualTo(longs(statement, "SELECT any_value("
            + "row_group_num_rows) FROM parquet_metadata('" + path + "') GROUP BY row_group_id ORDER BY row_group_id"));
      }
    }
    FilePart a = (FilePart) files.parts().get(0);
    assertThat(a.rowGroupRows()).hasSize(3);
    assertThat(files.rows()).isEqualTo(count("SELECT count(*) FROM dataset", "pq"));
  }

  @Test
  void aCsvFileIsCountedAndHasNoRowGroups() throws Exception {
    DatasetDescription csv = client.describe("dataset", "small.csv");
    assertThat(csv.kind()).isEqualTo(Kind.FILES);
    assertThat(csv.parts()).hasSize(1);
    FilePart file = (FilePart) csv.parts().get(0);
    assertThat(file.rowGroupRows()).isEmpty();
    assertThat(file.bytes()).isEqualTo(Files.size(data.resolve("small.csv")));
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = duckdb.createStatement()) {
      assertThat(file.rows()).isEqualTo(longs(statement, "SELECT count(*) FROM read_csv('"
          + data.resolve("small.csv") + "')").get(0));
    }
    assertThat(names(csv.schema())).containsExactly("id", "v");
  }

  @Test
  void aMissingNameIsNotFoundByName() {
    assertRefused(() -> client.describe("no_such_table"), StatusCode.NOT_FOUND, "no_such_table");
    assertRefused(() -> client.describe("nowhere.numbers"), StatusCode.NOT_FOUND, "nowhere.numbers");
    // Without a dataset, "dataset" is a name like any other.
    assertRefused(() -> client.describe("dataset"), StatusCode.NOT_FOUND, "dataset");
    assertRefused(() -> client.describe("dataset", "missing.parquet"), StatusCode.NOT_FOUND, "missing.parquet");
  }

  @Test
  void aBadNameIsAnInvalidArgument() {
    assertRefused(() -> client.describe(""), StatusCode.INVALID_ARGUMENT, "not a table name");
    assertRefused(() -> client.describe("a.b.c.d"), StatusCode.INVALID_ARGUMENT, "not a table name");
    assertRefused(() -> client.describe("\"unclosed"), StatusCode.INVALID_ARGUMENT, "not a table name");
    assertRefused(() -> client.describe("x".repeat(2000)), StatusCode.INVALID_ARGUMENT, "over the maximum");
  }

  @Test
  void sqlInANameIsNeverRun() {
    assertRefused(() -> client.describe("numbers; DROP TABLE numbers"), StatusCode.INVALID_ARGUMENT,
        "not a table name");
    assertRefused(() -> client.describe("numbers WHERE 1=1 --"), StatusCode.INVALID_ARGUMENT, "not a table name");
    // Quoted, the same text is only a (missing) name.
    assertRefused(() -> client.describe("\"numbers\"\"; DROP TABLE numbers; --\""), StatusCode.NOT_FOUND,
        "DROP TABLE");
    // A quoted file name is not read as a file (DuckDB's replacement scan): only tables and views are described.
    assertRefused(() -> client.describe("\"" + data.resolve("pq/a.parquet") + "\""), StatusCode.NOT_FOUND, "a.parquet");
    assertThat(client.describe("numbers").rows()).isEqualTo(TABLE_ROWS - TABLE_ROWS / 10);
  }

  @Test
  void aDatasetOutsideTheDataRootIsRefused() {
    assertRefused(() -> client.describe("dataset", "../" + databaseFolder.getFileName() + "/served.duckdb"),
        StatusCode.PERMISSION_DENIED, "outside the data root");
    assertRefused(() -> client.describe("dataset", "/etc/passwd"), StatusCode.PERMISSION_DENIED, "absolute");
  }

  @Test
  void theConnectionServesQueriesAfterDescribes() {
    for (int i = 0; i < 20; i++) {
      assertThat(client.describe("numbers_view").kind()).isEqualTo(Kind.VIEW);
    }
    assertThat(count("SELECT count(*) FROM numbers", "")).isEqualTo(TABLE_ROWS - TABLE_ROWS / 10);
  }

  @Test
  void onTheWireAnAnswerComesOnItsStreamIdAndStreamZeroIsRefused() throws Exception {
    try (RawControlConnection raw = new RawControlConnection(server.getLocation())) {
      raw.send(new io.thallus.internal.protocol.Message.Hello(io.thallus.internal.protocol.Protocol.VERSION, "raw",
          List.of("ipc"), Map.of(), Map.of()));
      assertThat(raw.receive()).isInstanceOf(io.thallus.internal.protocol.Message.Welcome.class);
      raw.send(new io.thallus.internal.protocol.Message.Describe(5, "numbers_view", ""));
      assertThat(raw.receive()).isInstanceOfSatisfying(io.thallus.internal.protocol.Message.Described.class, d -> {
        assertThat(d.streamId()).isEqualTo(5);
        assertThat(d.description().kind()).isEqualTo(Kind.VIEW);
      });
      raw.send(new io.thallus.internal.protocol.Message.Describe(6, "nope", ""));
      assertThat(raw.receive()).isInstanceOfSatisfying(io.thallus.internal.protocol.Message.Error.class, e -> {
        assertThat(e.streamId()).isEqualTo(6);
        assertThat(e.code()).isEqualTo(StatusCode.NOT_FOUND);
      });
      // LIST_SHARDS is answered on its id too (this server declares no sharded dataset).
      raw.send(new io.thallus.internal.protocol.Message.ListShards(7));
      assertThat(raw.receive()).isEqualTo(new io.thallus.internal.protocol.Message.Shards(7, List.of()));
      raw.send(new io.thallus.internal.protocol.Message.Describe(0, "numbers", ""));
      assertThat(raw.receive()).isInstanceOfSatisfying(io.thallus.internal.protocol.Message.Error.class, e -> {
        assertThat(e.streamId()).isZero();
        assertThat(e.code()).isEqualTo(StatusCode.PROTOCOL_ERROR);
        assertThat(e.message()).contains("stream id 0");
      });
    }
  }

  private static void assertRefused(org.assertj.core.api.ThrowableAssert.ThrowingCallable call, StatusCode code,
      String message) {
    assertThatThrownBy(call).isInstanceOfSatisfying(ThallusException.class, e -> {
      assertThat(e.code()).isEqualTo(code);
      assertThat(e.getMessage()).contains(message);
    });
  }

  private static long count(String sql, String dataset) {
    QueryRequest.Builder request = QueryRequest.builder(sql);
    if (!dataset.isEmpty()) {
      request.dataset(dataset);
    }
    try (ThallusStream stream = client.query(request.build())) {
      long value = -1;
      while (stream.hasNext()) {
        try (var root = stream.next()) {
          if (root.getRowCount() > 0) {
            value = ((Number) root.getVector(0).getObject(0)).longValue();
          }
        }
      }
      return value;
    }
  }

  private static void run(ThallusClient on, String sql) {
    try (ThallusStream stream = on.query(sql)) {
      while (stream.hasNext()) {
        stream.next().close();
      }
    }
  }

  private static List<Long> longs(Statement statement, String sql) throws SQLException {
    List<Long> values = new ArrayList<>();
    try (ResultSet rows = statement.executeQuery(sql)) {
      while (rows.next()) {
        values.add(rows.getLong(1));
      }
    }
    return values;
  }
}
