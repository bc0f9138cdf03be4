package io.thallus.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.Location;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import io.thallus.conformance.TypeTable;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.sql.Array;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.DriverPropertyInfo;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.SQLSyntaxErrorException;
import java.sql.SQLTimeoutException;
import java.sql.Statement;
import java.sql.Struct;
import java.sql.Types;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The JDBC driver through plain {@link DriverManager}, against a real server, every value compared with what
 * DuckDB's own JDBC driver returns for the same SQL run directly.
 */
class JdbcDriverTest {
  @TempDir
  static Path data;

  private static BufferAllocator allocator;
  private static ThallusServer server;
  private static String url;

  @BeforeAll
  static void start() throws Exception {
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:" + data.resolve("shop.duckdb"));
         Statement statement = duckdb.createStatement()) {
      statement.execute("CREATE TABLE items AS SELECT i AS id, 'item ' || i AS name, (i * 1.25)::DECIMAL(10,2) "
          + "AS price, DATE '2024-01-01' + i::INTEGER AS added FROM range(1000) t(i)");
      statement.execute("CREATE SCHEMA archive");
      statement.execute("CREATE TABLE archive.old_items (id INTEGER NOT NULL, note VARCHAR)");
    }
    allocator = new RootAllocator();
    server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0),
            DuckDBEngine.builder().filesUnder(data).build()).dataRoot(data).build().start();
    url = "jdbc:thallus://127.0.0.1:" + server.getLocation().port();
  }

  @AfterAll
  static void stop() {
    try {
      server.close();
    } finally {
      allocator.close();
    }
  }

  private static Connection connect(String suffix) throws SQLException {
    return DriverManager.getConnection(url + suffix);
  }

  // --- The type table, value by value against DuckDB's JDBC driver -------------------------------------------

  @ParameterizedTest
  @ValueSource(strings = {"", "?transport=tcp", "?transport=ipc&batchRows=97"})
  void everyTypeReadsAsDuckDBsOwnDriverReadsIt(String suffix) throws Exception {
    String sql = TypeTable.sql(700);
    try (Connection thallus = connect(suffix);
         Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
         Statement ours = thallus.createStatement();
         Statement theirs = duckdb.createStatement();
         ResultSet actual = ours.executeQuery(sql);
         ResultSet expected = theirs.executeQuery(sql)) {
      ResultSetMetaData meta = actual.getMetaData();
      assertThat(meta.getColumnCount()).isEqualTo(expected.getMetaData().getColumnCount());
      int rows = 0;
      while (expected.next()) {
        assertThat(actual.next()).as("row %d exists", rows).isTrue();
        for (int column = 1; column <= meta.getColumnCount(); column++) {
          String name = meta.getColumnName(column);
          assertThat(name).isEqualTo(expected.getMetaData().getColumnName(column));
          assertSameValue(name, meta.getColumnType(column), actual, expected, column);
        }
        rows++;
      }
      assertThat(actual.next()).isFalse();
      assertThat(rows).isEqualTo(700);
    }
  }

  /** Reads one cell with the getters a tool would use for its type and compares both drivers' answers. */
  private static void assertSameValue(String name, int type, ResultSet actual, ResultSet expected, int column)
      throws SQLException {
    String where = name + " row " + actual.getRow();
    Object theirs = expected.getObject(column);
    boolean isNull = theirs == null;
    assertThat(actual.getObject(column) == null).as(where + " is null").isEqualTo(isNull);
    assertThat(actual.wasNull()).as(where + " wasNull").isEqualTo(isNull);
    if (isNull) {
      assertThat(actual.getString(column)).as(where).isNull();
      return;
    }
    switch (type) {
      case Types.BOOLEAN -> assertThat(actual.getBoolean(column)).as(where).isEqualTo(expected.getBoolean(column));
      case Types.TINYINT, Types.SMALLINT, Types.INTEGER, Types.BIGINT -> {
        assertThat(actual.getLong(column)).as(where).isEqualTo(expected.getLong(column));
        assertThat(actual.getString(column)).as(where).isEqualTo(expected.getString(column));
        assertThat(actual.getBigDecimal(column)).as(where).isEqualTo(expected.getBigDecimal(column));
      }
      case Types.NUMERIC, Types.DECIMAL -> {
        assertThat(actual.getBigDecimal(column)).as(where).isEqualByComparingTo(new BigDecimal(theirs.toString()));
        assertThat(actual.getString(column)).as(where).isEqualTo(expected.getString(column));
      }
      case Types.REAL -> assertThat(actual.getFloat(column)).as(where).isEqualTo(expected.getFloat(column));
      case Types.DOUBLE -> {
        assertThat(actual.getDouble(column)).as(where).isEqualTo(expected.getDouble(column));
        assertThat(actual.getString(column)).as(where).isEqualTo(expected.getString(column));
      }
      case Types.VARCHAR -> assertThat(actual.getString(column)).as(where).isEqualTo(expected.getString(column));
      case Types.VARBINARY -> {
        assertThat(actual.getBytes(column)).as(where).isEqualTo(expected.getBytes(column));
        assertThat(actual.getString(column)).as(where).isEqualTo(expected.getString(column));
      }
      case Types.DATE -> {
        assertThat(actual.getObject(column, LocalDate.class)).as(where)
            .isEqualTo(expected.getObject(column, LocalDate.class));
        assertThat(actual.getDate(column)).as(where).isEqualTo(expected.getDate(column));
        assertThat(actual.getString(column)).as(where).isEqualTo(expected.getString(column));
      }
      case Types.TIME -> {
        assertThat(actual.getObject(column, LocalTime.class)).as(where).isEqualTo(theirs);
        assertThat(actual.getString(column)).as(where).isEqualTo(expected.getString(column));
      }
      case Types.TIMESTAMP -> {
        assertThat(actual.getTimestamp(column)).as(where).isEqualTo(expected.getTimestamp(column));
        assertThat(actual.getObject(column, LocalDateTime.class)).as(where)
            .isEqualTo(expected.getTimestamp(column).toLocalDateTime());
        assertThat(actual.getString(column)).as(where).isEqualTo(expected.getString(column));
      }
      case Types.TIMESTAMP_WITH_TIMEZONE -> {
        assertThat(actual.getObject(column, OffsetDateTime.class).toInstant()).as(where)
            .isEqualTo(((OffsetDateTime) theirs).toInstant());
        assertThat(actual.getTimestamp(column)).as(where).isEqualTo(expected.getTimestamp(column));
      }
      case Types.ARRAY -> assertThat(normalize(actual.getArray(column))).as(where)
          .isEqualTo(normalize(expected.getArray(column)));
      case Types.STRUCT, Types.OTHER -> assertThat(normalize(actual.getObject(column))).as(where)
          .isEqualTo(normalize(theirs));
      default -> throw new AssertionError(where + ": no comparison for JDBC type " + type);
    }
  }

  /** Both drivers' nested values as plain lists and maps of comparable scalars. */
  private static Object normalize(Object value) throws SQLException {
    return switch (value) {
      case null -> null;
      case Array array -> normalize(Arrays.asList((Object[]) array.getArray()));
      case Struct struct -> normalize(Arrays.asList(struct.getAttributes()));
      case List<?> list -> {
        List<Object> out = new ArrayList<>();
        for (Object item : list) {
          out.add(normalize(item));
        }
        yield out;
      }
      case Map<?, ?> map -> {
        Map<Object, Object> out = new LinkedHashMap<>();
        for (Map.Entry<?, ?> entry : map.entrySet()) {
          out.put(normalize(entry.getKey()), normalize(entry.getValue()));
        }
        yield out;
      }
      case java.sql.Blob blob -> HexFormat.of().formatHex(blob.getBytes(1, (int) blob.length()));
      case byte[] bytes -> HexFormat.of().formatHex(bytes);
      case BigDecimal number -> number.stripTrailingZeros().toPlainString();
      case java.math.BigInteger number -> number.toString();
      case Float number -> new BigDecimal(number.toString()).stripTrailingZeros().toPlainString();
      case Number number -> new BigDecimal(number.toString()).stripTrailingZeros().toPlainString();
      case java.sql.Timestamp timestamp -> timestamp.toLocalDateTime();
      case java.sql.Date date -> date.toLocalDate();
      default -> value;
    };
  }

  // --- Metadata -------------------------------------------------------------------------------------------

  @Test
  void resultSetMetaDataDescribesTheArrowSchema() throws Exception {
    try (Connection connection = connect("");
         Statement statement = connection.createStatement();
         ResultSet result = statement.executeQuery("SELECT 1::INTEGER AS i, 'x' AS s, 2.50::DECIMAL(9,2) AS d, "
             + "DATE '2024-01-01' AS day, [1, 2] AS list, {'a': 1} AS st, NULL::UBIGINT AS big")) {
      ResultSetMetaData meta = result.getMetaData();
      assertThat(meta.getColumnCount()).isEqualTo(7);
      assertThat(List.of(meta.getColumnType(1), meta.getColumnType(2), meta.getColumnType(3), meta.getColumnType(4),
          meta.getColumnType(5), meta.getColumnType(6), meta.getColumnType(7))).containsExactly(Types.INTEGER,
          Types.VARCHAR, Types.DECIMAL, Types.DATE, Types.ARRAY, Types.STRUCT, Types.NUMERIC);
      assertThat(meta.getColumnTypeName(3)).isEqualTo("DECIMAL(9,2)");
      assertThat(meta.getPrecision(3)).isEqualTo(9);
      assertThat(meta.getScale(3)).isEqualTo(2);
      assertThat(meta.getColumnTypeName(5)).isEqualTo("INTEGER[]");
      assertThat(meta.getColumnTypeName(6)).isEqualTo("STRUCT(a INTEGER)");
      assertThat(meta.getColumnClassName(1)).isEqualTo(Integer.class.getName());
      assertThat(meta.getColumnLabel(2)).isEqualTo("s");
      assertThatThrownBy(() -> meta.getColumnType(8)).isInstanceOf(SQLException.class).hasMessageContaining("1..7");
    }
  }

  @Test
  void databaseMetaDataAnswersFromDuckDBsCatalog() throws Exception {
    try (Connection connection = connect("/shop.duckdb")) {
      DatabaseMetaData meta = connection.getMetaData();
      try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
           Statement statement = duckdb.createStatement();
           ResultSet version = statement.executeQuery("SELECT library_version FROM pragma_version()")) {
        version.next();
        assertThat(meta.getDatabaseProductVersion()).isEqualTo(version.getString(1));
      }
      assertThat(meta.getDatabaseProductName()).isEqualTo("DuckDB");
      assertThat(meta.getDriverName()).isEqualTo("Thallus JDBC");
      assertThat(meta.getURL()).isEqualTo(url + "/shop.duckdb");

      List<String> tables = new ArrayList<>();
      try (ResultSet result = meta.getTables(null, null, "%items", new String[] {"TABLE"})) {
        while (result.next()) {
          tables.add(result.getString("TABLE_SCHEM") + "." + result.getString("TABLE_NAME") + ":"
              + result.getString("TABLE_TYPE"));
        }
      }
      assertThat(tables).containsExactlyInAnyOrder("archive.old_items:TABLE", "main.items:TABLE");

      List<String> columns = new ArrayList<>();
      try (ResultSet result = meta.getColumns(null, "main", "items", null)) {
        while (result.next()) {
          columns.add(result.getString("COLUMN_NAME") + " " + result.getInt("DATA_TYPE") + " "
              + result.getString("TYPE_NAME") + " " + result.getInt("ORDINAL_POSITION"));
        }
      }
      assertThat(columns).containsExactly("id " + Types.BIGINT + " BIGINT 1", "name " + Types.VARCHAR + " VARCHAR 2",
          "price " + Types.DECIMAL + " DECIMAL(10,2) 3", "added " + Types.DATE + " DATE 4");
      try (ResultSet result = meta.getColumns(null, "archive", "old\\_items", "id")) {
        assertThat(result.next()).isTrue();
        assertThat(result.getInt("NULLABLE")).isEqualTo(DatabaseMetaData.columnNoNulls);
        assertThat(result.getString("IS_NULLABLE")).isEqualTo("NO");
        assertThat(result.next()).isFalse();
      }

      List<String> schemas = new ArrayList<>();
      try (ResultSet result = meta.getSchemas()) {
        while (result.next()) {
          schemas.add(result.getString("TABLE_SCHEM"));
        }
      }
      assertThat(schemas).contains("main", "archive");
      try (ResultSet result = meta.getCatalogs()) {
        assertThat(result.next()).isTrue();
      }
      try (ResultSet result = meta.getTypeInfo()) {
        List<String> names = new ArrayList<>();
        while (result.next()) {
          names.add(result.getString("TYPE_NAME") + "=" + result.getInt("DATA_TYPE"));
        }
        assertThat(names).contains("BIGINT=" + Types.BIGINT, "VARCHAR=" + Types.VARCHAR);
      }
      try (ResultSet result = meta.getPrimaryKeys(null, "main", "items")) {
        assertThat(result.getMetaData().getColumnName(4)).isEqualTo("COLUMN_NAME");
        assertThat(result.next()).isFalse();
      }
    }
  }

  // --- Statements -----------------------------------------------------------------------------------------

  @Test
  void preparedStatementsBindTypedParametersOnTheServer() throws Exception {
    try (Connection connection = connect("/shop.duckdb");
         PreparedStatement statement = connection.prepareStatement(
             "SELECT id, name, price FROM items WHERE id BETWEEN ? AND ? AND name LIKE ? AND added >= ? "
                 + "AND price > ? ORDER BY id -- a '?' in a comment is not a parameter")) {
      assertThat(statement.getParameterMetaData().getParameterCount()).isEqualTo(5);
      statement.setInt(1, 100);
      statement.setLong(2, 300);
      statement.setString(3, "item 1%");
      statement.setDate(4, java.sql.Date.valueOf("2024-01-01"));
      statement.setBigDecimal(5, new BigDecimal("130.00"));
      List<Long> ids = new ArrayList<>();
      try (ResultSet result = statement.executeQuery()) {
        while (result.next()) {
          ids.add(result.getLong("id"));
          assertThat(result.getBigDecimal("price")).isEqualByComparingTo(
              BigDecimal.valueOf(result.getLong("id")).multiply(new BigDecimal("1.25")));
        }
      }
      List<Long> expected = new ArrayList<>();
      for (long id = 105; id <= 199; id++) {
        expected.add(id);
      }
      assertThat(ids).isEqualTo(expected);

      statement.clearParameters();
      statement.setInt(1, 1);
      assertThatThrownBy(statement::executeQuery).isInstanceOf(SQLException.class)
          .hasMessageContaining("parameter 2 of 5 is not set");
      ResultSetMetaData meta = statement.getMetaData();
      assertThat(meta.getColumnName(3)).isEqualTo("price");
    }
  }

  @Test
  void fetchSizeMaxRowsAndBadSql() throws Exception {
    try (Connection connection = connect("?transport=tcp");
         Statement statement = connection.createStatement()) {
      statement.setFetchSize(10);
      statement.setMaxRows(25);
      long sum = 0;
      int count = 0;
      try (ResultSet result = statement.executeQuery("SELECT i FROM range(1000) t(i) ORDER BY i")) {
        while (result.next()) {
          sum += result.getLong(1);
          count++;
        }
      }
      assertThat(count).isEqualTo(25);
      assertThat(sum).isEqualTo(24 * 25 / 2);

      assertThatThrownBy(() -> statement.executeQuery("SELECT nope FROM range(3)"))
          .isInstanceOf(SQLSyntaxErrorException.class)
          .hasMessageContaining("nope")
          .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("42000"));
      // The statement is still usable after an error.
      try (ResultSet result = statement.executeQuery("SELECT 42")) {
        assertThat(result.next()).isTrue();
        assertThat(result.getInt(1)).isEqualTo(42);
      }
    }
  }

  @Test
  @Timeout(60)
  void queryTimeoutBecomesTheServersDeadline() throws Exception {
    try (Connection connection = connect("");
         Statement statement = connection.createStatement()) {
      statement.setQueryTimeout(1);
      assertThatThrownBy(() -> {
        try (ResultSet result = statement.executeQuery(
            "SELECT count(*) FROM range(100000000000) a(i) WHERE i % 7 = 3")) {
          result.next();
        }
      }).isInstanceOf(SQLTimeoutException.class)
          .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("HYT00"));
    }
  }

  @Test
  @Timeout(60)
  void cancelStopsARunningQuery() throws Exception {
    try (Connection connection = connect("?batchRows=1000");
         Statement statement = connection.createStatement();
         ResultSet result = statement.executeQuery("SELECT i FROM range(100000000000) t(i)")) {
      assertThat(result.next()).isTrue();
      CompletableFuture.runAsync(() -> {
        try {
          statement.cancel();
        } catch (SQLException e) {
          throw new RuntimeException(e);
        }
      }).get(10, TimeUnit.SECONDS);
      assertThatThrownBy(() -> {
        while (result.next()) {
          // drain what was already in flight
        }
      }).isInstanceOf(SQLException.class)
          .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("57014"));
    }
  }

  @Test
  void closeIsIdempotentAndClosesChildren() throws Exception {
    Connection connection = connect("");
    Statement statement = connection.createStatement();
    ResultSet result = statement.executeQuery("SELECT * FROM range(100000)");
    assertThat(result.next()).isTrue();
    connection.close();
    connection.close();
    assertThat(result.isClosed()).isTrue();
    assertThat(statement.isClosed()).isTrue();
    assertThatThrownBy(() -> result.next()).isInstanceOf(SQLException.class).hasMessageContaining("closed");
    assertThatThrownBy(connection::createStatement).isInstanceOf(SQLException.class)
        .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("08003"));
  }

  @Test
  void unsupportedCallsSaySo() throws Exception {
    try (Connection connection = connect("");
         Statement statement = connection.createStatement();
         ResultSet result = statement.executeQuery("SELECT 1")) {
      assertThatThrownBy(result::previous).isInstanceOf(SQLFeatureNotSupportedException.class);
      assertThatThrownBy(() -> result.updateInt(1, 2)).isInstanceOf(SQLFeatureNotSupportedException.class);
      assertThatThrownBy(() -> connection.prepareCall("CALL x()")).isInstanceOf(SQLFeatureNotSupportedException.class);
      assertThatThrownBy(() -> connection.createStatement(ResultSet.TYPE_SCROLL_INSENSITIVE,
          ResultSet.CONCUR_READ_ONLY)).isInstanceOf(SQLFeatureNotSupportedException.class);
      // Each says its own reason, not the result sets' one.
      assertThatThrownBy(statement::getGeneratedKeys).isInstanceOf(SQLFeatureNotSupportedException.class)
          .hasMessageContaining("RETURNING");
      assertThatThrownBy(() -> connection.setNetworkTimeout(null, 1000))
          .isInstanceOf(SQLFeatureNotSupportedException.class).hasMessageContaining("'timeout' property");
      assertThatThrownBy(() -> connection.setTransactionIsolation(Connection.TRANSACTION_SERIALIZABLE))
          .isInstanceOf(SQLFeatureNotSupportedException.class).hasMessageContaining("snapshot");
      assertThatThrownBy(connection::setSavepoint).isInstanceOf(SQLFeatureNotSupportedException.class)
          .hasMessageContaining("savepoints").hasMessageNotContaining("forward-only");
    }
  }

  /** getConnection checks what it connects to: a failure there is a connection failure (08001), not a query's. */
  @Test
  void getConnectionValidatesTheDatasetAndReportsConnectionFailuresAs08001() throws Exception {
    try (Connection connection = connect("/shop.duckdb")) {
      assertThat(connection.isValid(5)).isTrue();
    }
    assertThatThrownBy(() -> connect("/nowhere.duckdb"))
        .isInstanceOfSatisfying(java.sql.SQLNonTransientConnectionException.class, e -> {
          assertThat(e.getSQLState()).isEqualTo("08001");
          assertThat(e.getMessage()).contains("cannot connect").contains("nowhere.duckdb");
        });
    assertThatThrownBy(() -> connect("/..%2F..%2Fetc%2Fpasswd"))
        .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("08001"));
    int closedPort;
    try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
      closedPort = socket.getLocalPort();
    }
    assertThatThrownBy(() -> DriverManager.getConnection("jdbc:thallus://127.0.0.1:" + closedPort))
        .isInstanceOfSatisfying(java.sql.SQLTransientConnectionException.class,
            e -> assertThat(e.getSQLState()).isEqualTo("08001"));
  }

  /**
   * execute(), executeUpdate(), executeQuery() and the update count answer as DuckDB's own driver answers for the
   * same statements, run directly: a statement that changes rows or the catalog is an update count, not a result set.
   */
  @Test
  void executeAndUpdateCountsAnswerAsDuckDBsDriverDoes() throws Exception {
    String table = "counted_" + System.nanoTime();
    List<String> statements = List.of(
        "CREATE TABLE " + table + " (id INTEGER, name VARCHAR)",
        "INSERT INTO " + table + " SELECT i, 'n' || i FROM range(5) t(i)",
        "UPDATE " + table + " SET name = 'x' WHERE id < 3",
        "DELETE FROM " + table + " WHERE id = 4",
        "SELECT count(*) FROM " + table,
        "INSERT INTO " + table + " VALUES (9, 'nine') RETURNING id",
        "DROP TABLE " + table);
    List<String> expected = new ArrayList<>();
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = duckdb.createStatement()) {
      for (String sql : statements) {
        boolean results = statement.execute(sql);
        expected.add(sql.split(" ")[0] + ": " + results + ", " + statement.getUpdateCount());
      }
    }
    List<String> actual = new ArrayList<>();
    try (Connection connection = connect("");
         Statement statement = connection.createStatement()) {
      for (String sql : statements) {
        boolean results = statement.execute(sql);
        actual.add(sql.split(" ")[0] + ": " + results + ", " + statement.getUpdateCount());
        assertThat(statement.getResultSet() != null).as(sql).isEqualTo(results);
      }
      assertThat(actual).isEqualTo(expected);

      assertThat(statement.executeUpdate("CREATE TABLE " + table + " (id INTEGER)"))
          .isEqualTo(statementCount(expected.getFirst()));
      assertThat(statement.executeUpdate("INSERT INTO " + table + " SELECT * FROM range(7)")).isEqualTo(7);
      assertThatThrownBy(() -> statement.executeUpdate("SELECT 1")).isInstanceOf(SQLException.class)
          .hasMessageContaining("executeUpdate() can only be used with statements that return no result set");
      assertThatThrownBy(() -> statement.executeQuery("DELETE FROM " + table)).isInstanceOf(SQLException.class)
          .hasMessageContaining("executeQuery() can only be used with statements that return a result set");
      try (PreparedStatement insert = connection.prepareStatement("INSERT INTO " + table + " VALUES (?)")) {
        insert.setInt(1, 42);
        assertThat(insert.execute()).isFalse();
        assertThat(insert.getUpdateCount()).isEqualTo(1);
        assertThat(insert.getUpdateCount()).as("once per result").isEqualTo(-1);
        insert.setInt(1, 43);
        assertThat(insert.executeUpdate()).isEqualTo(1);
        // An update count has no result set to complete: closeOnCompletion leaves the statement open.
        insert.closeOnCompletion();
        insert.setInt(1, 44);
        assertThat(insert.executeUpdate()).isEqualTo(1);
        assertThat(insert.isClosed()).isFalse();
      }
      statement.execute("DROP TABLE " + table);
    }
  }

  private static int statementCount(String line) {
    return Integer.parseInt(line.substring(line.lastIndexOf(' ') + 1));
  }

  /** Commit or rollback in auto-commit mode says there is no transaction, as DuckDB's own driver does. */
  @Test
  void commitAndRollbackInAutoCommitModeFailAsInDuckDBsDriver() throws Exception {
    try (Connection connection = connect("");
         Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = connection.createStatement()) {
      for (Connection each : List.of(connection, duckdb)) {
        assertThat(each.getAutoCommit()).isTrue();
        each.setAutoCommit(true);
        assertThatThrownBy(each::rollback).isInstanceOf(SQLException.class);
        assertThatThrownBy(each::commit).isInstanceOf(SQLException.class);
      }
      assertThatThrownBy(connection::rollback).isInstanceOfSatisfying(SQLException.class,
          e -> assertThat(e.getSQLState()).isEqualTo("25000"));
      assertThatThrownBy(connection::commit).isInstanceOfSatisfying(SQLException.class,
          e -> assertThat(e.getMessage()).contains("no transaction is active"));
      try (ResultSet result = statement.executeQuery("SELECT 1")) {
        assertThat(result.next()).isTrue(); // the connection is still usable
      }
    }
  }

  // --- URLs and properties --------------------------------------------------------------------------------

  @Test
  void urlsAndProperties() throws Exception {
    ThallusDriver driver = new ThallusDriver();
    assertThat(driver.acceptsURL("jdbc:thallus://h:1")).isTrue();
    assertThat(driver.acceptsURL("jdbc:duckdb:")).isFalse();
    assertThat(driver.connect("jdbc:duckdb:", new Properties())).isNull();
    DriverPropertyInfo[] infos = driver.getPropertyInfo(url, new Properties());
    assertThat(Arrays.stream(infos).map(i -> i.name)).containsExactly(Arrays.stream(ThallusProperty.values())
        .map(ThallusProperty::key).toArray(String[]::new));

    assertThatThrownBy(() -> DriverManager.getConnection(url + "?tranport=tcp"))
        .isInstanceOf(SQLException.class).hasMessageContaining("unknown property 'tranport'");
    assertThatThrownBy(() -> DriverManager.getConnection(url + "?batchRows=many"))
        .isInstanceOf(SQLException.class).hasMessageContaining("batchRows must be a whole number");
    assertThatThrownBy(() -> DriverManager.getConnection("jdbc:thallus://127.0.0.1:1?connectTimeout=2"))
        .isInstanceOf(SQLException.class)
        .satisfies(e -> assertThat(((SQLException) e).getSQLState()).startsWith("08"));
    // A dataset outside the data root is refused by getConnection itself, as a connection failure.
    assertThatThrownBy(() -> DriverManager.getConnection(url + "/../outside.parquet"))
        .isInstanceOfSatisfying(SQLException.class, e -> {
          assertThat(e.getSQLState()).isEqualTo("08001");
          assertThat(e.getMessage()).contains("outside");
        });

    Properties properties = new Properties();
    properties.setProperty("transport", "ipc");
    properties.setProperty("user", "alice");
    try (Connection connection = DriverManager.getConnection(url + "?transport=tcp", properties)) {
      assertThat(connection.unwrap(ThallusConnection.class).client().transport()).isEqualTo("ipc");
      assertThat(connection.getMetaData().getUserName()).isEqualTo("alice");
      assertThat(connection.isValid(5)).isTrue();
    }

    ThallusDataSource source = new ThallusDataSource(url + "/shop.duckdb");
    source.setProperty(ThallusProperty.TRANSPORT, "tcp");
    try (Connection connection = source.getConnection();
         Statement statement = connection.createStatement();
         ResultSet result = statement.executeQuery("SELECT count(*) FROM items")) {
      assertThat(result.next()).isTrue();
      assertThat(result.getLong(1)).isEqualTo(1000);
    }
  }
}
