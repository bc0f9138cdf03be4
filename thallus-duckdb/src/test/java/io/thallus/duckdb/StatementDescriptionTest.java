package io.thallus.duckdb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.Location;
import io.thallus.QueryRequest;
import io.thallus.StatementDescription;
import io.thallus.StatementKind;
import io.thallus.StatusCode;
import io.thallus.ThallusClient;
import io.thallus.ThallusException;
import io.thallus.ThallusStream;
import io.thallus.server.ThallusServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The engine's classification of statements, over the wire ({@link ThallusClient#describeStatement}), compared with
 * what DuckDB's own driver does with the same statement on a database of its own: rows, or an update count.
 */
@Timeout(120)
class StatementDescriptionTest {
  private static final String SETUP = "CREATE TABLE t (i INTEGER, s VARCHAR); "
      + "INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')";

  private BufferAllocator allocator;
  private ThallusServer server;
  private ThallusClient client;
  private Connection duckdb;

  @BeforeEach
  void start() throws SQLException {
    allocator = new RootAllocator();
    server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create()).build().start();
    client = ThallusClient.connect(allocator, server.getLocation().withTransport("tcp"));
    duckdb = DriverManager.getConnection("jdbc:duckdb:");
    for (String sql : SETUP.split("; ")) {
      readAll(client.query(sql));
      try (Statement statement = duckdb.createStatement()) {
        statement.execute(sql);
      }
    }
  }

  @AfterEach
  void stop() throws SQLException {
    try {
      duckdb.close();
      client.close();
      server.close();
    } finally {
      allocator.close();
    }
  }

  /** One statement per kind, run in this order on both sides so each side's state stays the same. */
  private static final List<String> STATEMENTS = List.of(
      "SELECT * FROM t ORDER BY i",
      "VALUES (1), (2)",
      "FROM t",
      "SHOW TABLES",
      "DESCRIBE t",
      "SUMMARIZE t",
      "EXPLAIN SELECT 1",
      "PRAGMA version",
      "WITH x AS (SELECT 1 AS one) SELECT * FROM x",
      "INSERT INTO t VALUES (4, 'd') RETURNING i",
      "INSERT INTO t VALUES (5, 'e')",
      "UPDATE t SET s = 'z' WHERE i < 3",
      "DELETE FROM t WHERE i = 5",
      "CREATE TABLE u (x INTEGER)",
      "ALTER TABLE u ADD COLUMN y VARCHAR",
      "CREATE VIEW w AS SELECT * FROM u",
      "DROP VIEW w",
      "SET VARIABLE answer = 42",
      "BEGIN TRANSACTION",
      "INSERT INTO u VALUES (1, 'one')",
      "COMMIT",
      "START TRANSACTION",
      "DELETE FROM u",
      "ROLLBACK",
      "DROP TABLE u");

  @Test
  void eachKindIsWhatDuckDBItselfAnswersRowsOrAnUpdateCountFor() throws SQLException {
    List<String> mismatches = new ArrayList<>();
    for (String sql : STATEMENTS) {
      StatementDescription description = client.describeStatement(QueryRequest.of(sql));
      boolean rows;
      long count;
      try (Statement statement = duckdb.createStatement()) {
        rows = statement.execute(sql);
        count = rows ? -1 : statement.getLargeUpdateCount();
      }
      StatementKind expected = rows ? StatementKind.QUERY : count >= 0 ? StatementKind.UPDATE : StatementKind.COMMAND;
      try (ThallusStream stream = client.query(sql)) {
        boolean countAnswered = stream.isUpdateCount();
        long answered = countAnswered ? readCount(stream) : readAll(stream);
        if (description.kind() != expected || countAnswered == rows || (countAnswered && answered != count)) {
          mismatches.add(sql + ": described " + description.kind() + ", DuckDB " + expected + " (" + count
              + "), Thallus answered " + (countAnswered ? "count " + answered : "rows"));
        }
      }
    }
    assertThat(mismatches).isEmpty();
  }

  @Test
  void describingRunsNothingAndTheTransactionStateIsDuckDBs() {
    client.describeStatement(QueryRequest.of("DELETE FROM t"));
    client.describeStatement(QueryRequest.of("BEGIN TRANSACTION"));
    assertThat(count("SELECT count(*) FROM t")).isEqualTo(3);
    // The schema of a statement without rows is an update count's, and the statement does not run for it.
    assertThat(client.schema(QueryRequest.of("DELETE FROM t")).getCustomMetadata())
        .containsEntry(ThallusStream.UPDATE_COUNT, "true");
    assertThat(count("SELECT count(*) FROM t")).isEqualTo(3);

    // BEGIN in the SQL text: the session is in DuckDB's transaction until ROLLBACK, which undoes the delete.
    readAll(client.query("BEGIN"));
    readAll(client.query("DELETE FROM t WHERE i = 1"));
    readAll(client.query(QueryRequest.builder("DELETE FROM t WHERE i = 2").autoCommit(false).build()));
    readAll(client.query("ABORT"));
    assertThat(count("SELECT count(*) FROM t")).isEqualTo(3);
    // Auto-commit off begins the transaction; COMMIT ends it.
    readAll(client.query(QueryRequest.builder("DELETE FROM t WHERE i = 3").autoCommit(false).build()));
    readAll(client.query("COMMIT"));
    assertThat(count("SELECT count(*) FROM t")).isEqualTo(2);
    // No transaction is open any more, as DuckDB says.
    assertThatThrownBy(() -> readAll(client.query("ROLLBACK"))).hasMessageContaining("no transaction");
  }

  @Test
  void placeholdersInStringsCommentsQuotedNamesAndDollarQuotesAreNone() throws SQLException {
    List<String> texts = List.of(
        "SELECT '?' AS a, ? AS b -- ? in a comment\n",
        "SELECT $$ ? $1 $$ AS a, ?::INTEGER AS b /* ? $2 */",
        "SELECT \"?\" FROM (SELECT 1 AS \"?\") WHERE 1 = ?",
        "SELECT 'it''s ?' AS a, ? AS b",
        "SELECT $1::DATE AS a, $2::VARCHAR AS b, $1 AS c",
        "SELECT 42 AS answer");
    for (String sql : texts) {
      int direct;
      try (PreparedStatement prepared = duckdb.prepareStatement(sql)) {
        direct = prepared.getParameterMetaData().getParameterCount();
      }
      assertThat(client.describeStatement(QueryRequest.of(sql)).parameterCount()).as(sql).isEqualTo(direct);
    }
    assertThat(client.describeStatement(QueryRequest.of(texts.get(0))).parameterCount()).isEqualTo(1);
    assertThat(client.describeStatement(QueryRequest.of(texts.get(1))).parameterCount()).isEqualTo(1);
    assertThat(client.describeStatement(QueryRequest.of(texts.get(4))).parameterCount()).isEqualTo(2);
    assertThat(client.describeStatement(QueryRequest.of(texts.get(5))).parameterCount()).isZero();
  }

  @Test
  void parameterTypesAreArrowTypesAndTheResultSchemaIsThePlannedOne() {
    readAll(client.query("CREATE TABLE typed (i INTEGER, b BIGINT, v VARCHAR, d DECIMAL(12, 3), day DATE, "
        + "ts TIMESTAMP, ok BOOLEAN, x DOUBLE)"));
    String sql = "SELECT i, d FROM typed WHERE i = ? AND b = ? AND v = ? AND d = ? AND day = ? AND ts = ? "
        + "AND ok = ? AND x = ?";
    StatementDescription description = client.describeStatement(QueryRequest.of(sql));
    assertThat(description.kind()).isEqualTo(StatementKind.QUERY);
    assertThat(description.parameters()).extracting(Field::getType).containsExactly(
        new ArrowType.Int(32, true), new ArrowType.Int(64, true), ArrowType.Utf8.INSTANCE,
        new ArrowType.Decimal(12, 3, 128), new ArrowType.Date(DateUnit.DAY),
        new ArrowType.Timestamp(TimeUnit.MICROSECOND, null), ArrowType.Bool.INSTANCE,
        new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE));
    List<Object> nulls = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      nulls.add(null);
    }
    assertThat(description.result()).isEqualTo(client.schema(QueryRequest.builder(sql).parameters(nulls).build()));
    assertThat(client.describeStatement(QueryRequest.of("SELECT ? AS unknown")).parameters().get(0).getType())
        .isEqualTo(ArrowType.Null.INSTANCE);
    StatementDescription update = client.describeStatement(QueryRequest.of("UPDATE typed SET v = ? WHERE i = ?"));
    assertThat(update.kind()).isEqualTo(StatementKind.UPDATE);
    assertThat(update.result().getFields()).isEmpty();
    assertThat(update.parameters()).extracting(Field::getType)
        .containsExactly(ArrowType.Utf8.INSTANCE, new ArrowType.Int(32, true));
  }

  @Test
  void aPlaceholderThatMayNotBeNullStillDescribesAndLeavesTheTransactionUsable() {
    // DuckDB refuses NULL for repeat's count when it plans the statement with its values.
    String sql = "SELECT * FROM repeat(7, ?)";
    StatementDescription outside = client.describeStatement(QueryRequest.of(sql));
    assertThat(outside.kind()).isEqualTo(StatementKind.QUERY);
    assertThat(outside.parameterCount()).isEqualTo(1);
    assertThat(outside.result().getFields()).hasSize(1);
    readAll(client.query("BEGIN"));
    readAll(client.query("INSERT INTO t VALUES (6, 'f')"));
    assertThat(client.describeStatement(QueryRequest.of(sql)).parameterCount()).isEqualTo(1);
    // The transaction is not aborted: it goes on and commits.
    assertThat(count("SELECT count(*) FROM t")).isEqualTo(4);
    readAll(client.query("COMMIT"));
    assertThat(count("SELECT count(*) FROM t")).isEqualTo(4);
    try (ThallusStream stream = client.query(QueryRequest.builder(sql).parameters(3).build())) {
      assertThat(readAll(stream)).isEqualTo(3);
    }
  }

  @Test
  void badSqlIsInvalidArgumentWithDuckDBsMessage() {
    assertThatThrownBy(() -> client.describeStatement(QueryRequest.of("SELECT * FROM missing_table")))
        .isInstanceOfSatisfying(ThallusException.class, e -> {
          assertThat(e.code()).isEqualTo(StatusCode.INVALID_ARGUMENT);
          assertThat(e.getMessage()).contains("missing_table");
        });
    assertThat(count("SELECT count(*) FROM t")).isEqualTo(3);
  }

  private long count(String sql) {
    try (ThallusStream stream = client.query(sql); VectorSchemaRoot root = stream.next()) {
      return ((Number) root.getVector(0).getObject(0)).longValue();
    }
  }

  private static long readCount(ThallusStream stream) {
    long total = 0;
    while (stream.hasNext()) {
      try (VectorSchemaRoot root = stream.next()) {
        BigIntVector counts = (BigIntVector) root.getVector(0);
        for (int row = 0; row < root.getRowCount(); row++) {
          total += counts.get(row);
        }
      }
    }
    return total;
  }

  private static long readAll(ThallusStream stream) {
    try (stream) {
      long rows = 0;
      while (stream.hasNext()) {
        try (VectorSchemaRoot root = stream.next()) {
          rows += root.getRowCount();
        }
      }
      return rows;
    }
  }
}
