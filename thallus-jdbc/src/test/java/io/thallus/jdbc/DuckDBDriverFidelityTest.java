package io.thallus.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.thallus.Location;
import io.thallus.conformance.TypeTable;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import java.nio.file.Path;
import java.sql.Array;
import java.sql.Blob;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Struct;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 35: {@code getString} and {@code getObject} of jdbc:thallus give exactly what DuckDB's own JDBC driver gives
 * for the same query run in process: every column of the conformance suite's type table, and the values the issue
 * found wrong (UHUGEINT's maximum, BIT, VARINT, negative intervals, a list of lists), row by row. getObject is
 * compared by class and value; for the JDBC interfaces each driver implements with classes of its own (Array,
 * Struct, Blob) by interface and contents.
 */
class DuckDBDriverFidelityTest {
  @TempDir
  static Path data;

  private static BufferAllocator allocator;
  private static ThallusServer server;
  private static String url;

  /** The values the issue found read differently, three rows each (NULL on none). */
  private static final List<TypeTable.Column> EDGES = List.of(
      new TypeTable.Column("e_uhugeint", "CASE i WHEN 0 THEN 340282366920938463463374607431768211455::UHUGEINT "
          + "WHEN 1 THEN 0::UHUGEINT ELSE 170141183460469231731687303715884105728::UHUGEINT END"),
      new TypeTable.Column("e_hugeint", "CASE i WHEN 0 THEN (-170141183460469231731687303715884105727)::HUGEINT "
          + "WHEN 1 THEN 170141183460469231731687303715884105727::HUGEINT ELSE (-1)::HUGEINT END"),
      new TypeTable.Column("e_bit", "CASE i WHEN 0 THEN '10101'::BIT WHEN 1 THEN '1'::BIT "
          + "ELSE '0000000011111111'::BIT END"),
      new TypeTable.Column("e_varint", "CASE i WHEN 0 THEN '123456789012345678901234567890'::VARINT "
          + "WHEN 1 THEN '-98765432109876543210'::VARINT ELSE 0::VARINT END"),
      new TypeTable.Column("e_interval", "CASE i WHEN 0 THEN INTERVAL '-1 day' "
          + "WHEN 1 THEN to_months(-14) + to_days(-1) + to_microseconds(-3723500000) "
          + "ELSE to_months(1) + to_days(1) + to_microseconds(1) END"),
      new TypeTable.Column("e_nested_list", "CASE i WHEN 0 THEN [[1], [2, 3]] "
          + "WHEN 1 THEN [[]::INTEGER[], NULL, [NULL::INTEGER]] ELSE [[4]] END"),
      new TypeTable.Column("e_timetz", "CASE i WHEN 0 THEN '12:00:00+05:30'::TIMETZ "
          + "WHEN 1 THEN '23:59:59.123456-08'::TIMETZ ELSE '00:00:01.5+00'::TIMETZ END"),
      new TypeTable.Column("e_uuid", "('00000000-0000-4000-8000-' || lpad(i::VARCHAR, 12, '0'))::UUID"));

  @BeforeAll
  static void start() {
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

  @Test
  void everyTypeTableColumnReadsAsDuckDBsOwnDriverReadsIt() throws Exception {
    assertSameAnswers(TypeTable.sql(700), 700);
  }

  @Test
  void theValuesTheIssueFoundReadAsDuckDBsOwnDriverReadsThem() throws Exception {
    String columns = EDGES.stream().map(c -> c.expression() + " AS " + c.name()).collect(Collectors.joining(", "));
    assertSameAnswers("SELECT i AS row_id, " + columns + " FROM range(3) t(i) ORDER BY i", 3);
  }

  @Test
  void listParametersFromCreateArrayOfBindAsInDuckDBsOwnDriver() throws Exception {
    String sql = "SELECT ? AS l, list_sum(?) AS s, ? AS v, ? AS d";
    try (Connection thallus = DriverManager.getConnection(url);
         Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
         java.sql.PreparedStatement ours = thallus.prepareStatement(sql);
         java.sql.PreparedStatement theirs = duckdb.prepareStatement(sql)) {
      for (var pair : List.of(List.of(thallus, ours), List.of(duckdb, theirs))) {
        Connection connection = (Connection) pair.get(0);
        java.sql.PreparedStatement statement = (java.sql.PreparedStatement) pair.get(1);
        statement.setArray(1, connection.createArrayOf("INTEGER", new Object[] {1, 2, null, 3}));
        statement.setObject(2, connection.createArrayOf("BIGINT", new Object[] {5L, 6L}));
        statement.setArray(3, connection.createArrayOf("VARCHAR", new Object[] {"a", "", null}));
        statement.setArray(4, connection.createArrayOf("DATE", new Object[] {java.sql.Date.valueOf("2024-01-02")}));
      }
      try (ResultSet actual = ours.executeQuery(); ResultSet expected = theirs.executeQuery()) {
        assertThat(expected.next()).isTrue();
        assertThat(actual.next()).isTrue();
        for (int column = 1; column <= 4; column++) {
          assertThat(actual.getString(column)).as("column %d: getString", column)
              .isEqualTo(expected.getString(column));
          assertThat(comparable(actual.getObject(column))).as("column %d: getObject", column)
              .isEqualTo(comparable(expected.getObject(column)));
        }
        assertThat(actual.getString(1)).isEqualTo("[1, 2, NULL, 3]");
        assertThat(actual.getLong(2)).isEqualTo(11L);
      }
      // A batch's rows travel as Arrow columns of scalars: a list in one is refused, naming what to do instead.
      ours.addBatch();
      org.assertj.core.api.Assertions.assertThatThrownBy(ours::executeBatch)
          .isInstanceOf(java.sql.BatchUpdateException.class).hasMessageContaining("a batch cannot bind a list");
    }
  }

  /**
   * TIME WITH TIME ZONE keeps its offset (the server sends it as DuckDB's text) in a prepared query with a value
   * bound, inside a transaction; a query whose column names repeat, and a statement that is not one SELECT, run as
   * they are (their time without offset), once.
   */
  @Test
  void timeWithTimeZoneKeepsItsOffsetWhenPreparedAndInATransaction() throws Exception {
    String sql = "SELECT ?::TIMETZ AS t, i FROM range(3) r(i) ORDER BY i DESC";
    try (Connection thallus = DriverManager.getConnection(url);
         Connection duckdb = DriverManager.getConnection("jdbc:duckdb:")) {
      thallus.setAutoCommit(false);
      duckdb.setAutoCommit(false);
      try (java.sql.PreparedStatement ours = thallus.prepareStatement(sql);
           java.sql.PreparedStatement theirs = duckdb.prepareStatement(sql)) {
        ours.setString(1, "01:02:03.25-03:30");
        theirs.setString(1, "01:02:03.25-03:30");
        try (ResultSet actual = ours.executeQuery(); ResultSet expected = theirs.executeQuery()) {
          while (expected.next()) {
            assertThat(actual.next()).isTrue();
            assertThat(comparable(actual.getObject(1))).isEqualTo(comparable(expected.getObject(1)));
            assertThat(actual.getString(1)).isEqualTo(expected.getString(1)).isEqualTo("01:02:03.250-03:30");
            assertThat(actual.getLong(2)).isEqualTo(expected.getLong(2));
          }
          assertThat(actual.next()).isFalse();
          assertThat(actual.getMetaData().getColumnType(1)).isEqualTo(expected.getMetaData().getColumnType(1))
              .isEqualTo(java.sql.Types.TIME_WITH_TIMEZONE);
          assertThat(actual.getMetaData().getColumnClassName(1)).isEqualTo(java.time.OffsetTime.class.getName());
        }
      }
      thallus.commit();
      try (Statement statement = thallus.createStatement();
           ResultSet repeated = statement.executeQuery("SELECT '12:00:00+05:30'::TIMETZ AS a, 1 AS a")) {
        assertThat(repeated.next()).isTrue();
        assertThat(repeated.getObject(1)).isEqualTo(java.time.LocalTime.NOON);
      }
      // Not one SELECT: it runs once, as it is (its time without offset), never again to be wrapped.
      try (Statement statement = thallus.createStatement()) {
        statement.execute("CREATE TEMP TABLE zones (t TIMETZ)");
        try (ResultSet returned = statement.executeQuery("INSERT INTO zones VALUES ('12:00:00+05:30') RETURNING t")) {
          assertThat(returned.next()).isTrue();
          assertThat(returned.getObject(1)).isEqualTo(java.time.LocalTime.NOON);
        }
        try (ResultSet stored = statement.executeQuery("SELECT count(*), any_value(t) FROM zones")) {
          assertThat(stored.next()).isTrue();
          assertThat(stored.getLong(1)).isEqualTo(1);
          assertThat(stored.getObject(2)).isEqualTo(java.time.OffsetTime.parse("12:00+05:30"));
        }
      }
    }
  }

  private static void assertSameAnswers(String sql, int rows) throws SQLException {
    try (Connection thallus = DriverManager.getConnection(url);
         Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
         Statement ours = thallus.createStatement();
         Statement theirs = duckdb.createStatement();
         ResultSet actual = ours.executeQuery(sql);
         ResultSet expected = theirs.executeQuery(sql)) {
      ResultSetMetaData meta = expected.getMetaData();
      assertThat(actual.getMetaData().getColumnCount()).isEqualTo(meta.getColumnCount());
      int row = 0;
      while (expected.next()) {
        assertThat(actual.next()).as("row %d exists", row).isTrue();
        for (int column = 1; column <= meta.getColumnCount(); column++) {
          String where = meta.getColumnName(column) + " (" + meta.getColumnTypeName(column) + ") row " + row;
          assertThat(actual.getString(column)).as(where + ": getString").isEqualTo(expected.getString(column));
          assertThat(comparable(actual.getObject(column))).as(where + ": getObject")
              .isEqualTo(comparable(expected.getObject(column)));
        }
        row++;
      }
      assertThat(actual.next()).isFalse();
      assertThat(row).isEqualTo(rows);
    }
  }

  /**
   * A value as the test compares it: the class and the value, except for the JDBC interfaces each driver implements
   * with its own classes, which are compared by interface and contents (recursively).
   */
  private static Object comparable(Object value) throws SQLException {
    return switch (value) {
      case null -> null;
      case Array array -> List.of("java.sql.Array", comparableAll((Object[]) array.getArray()));
      case Struct struct -> List.of("java.sql.Struct", comparableAll(struct.getAttributes()));
      case Blob blob -> List.of("java.sql.Blob", HexFormat.of().formatHex(blob.getBytes(1, (int) blob.length())));
      case Map<?, ?> map -> {
        Map<Object, Object> entries = new LinkedHashMap<>();
        for (Map.Entry<?, ?> entry : map.entrySet()) {
          entries.put(comparable(entry.getKey()), comparable(entry.getValue()));
        }
        yield List.of("java.util.Map", entries);
      }
      default -> List.of(value.getClass().getName(), value);
    };
  }

  private static List<Object> comparableAll(Object[] values) throws SQLException {
    List<Object> out = new ArrayList<>(values.length);
    for (Object value : values) {
      out.add(comparable(value));
    }
    return out;
  }
}
