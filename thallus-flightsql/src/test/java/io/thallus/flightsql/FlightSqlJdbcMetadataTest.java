package io.thallus.flightsql;

import static org.assertj.core.api.Assertions.assertThat;

import io.thallus.testing.ChildJvm;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.sql.impl.FlightSql.SqlTransactionIsolationLevel;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the Arrow Flight SQL JDBC driver's {@code DatabaseMetaData} says of the front door, against what DuckDB's own
 * driver says of DuckDB: every method answers, the values read from the server's SQL info are DuckDB's, columns and
 * keys are DuckDB's; sqlline's {@code !columns} lists the columns; timestamps bound by the driver are stored as given.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class FlightSqlJdbcMetadataTest {
  /** Pens hold animals (a two-column key), animals visit (a one-column key); comments, defaults, NOT NULLs. */
  private static final List<String> SCHEMA = List.of(
      "CREATE TABLE pens (zone VARCHAR, number INTEGER, area DECIMAL(9,2) NOT NULL, PRIMARY KEY (zone, number))",
      "CREATE TABLE animals (id INTEGER PRIMARY KEY, name VARCHAR NOT NULL, weight DECIMAL(9,2) DEFAULT 1.5,"
          + " born DATE, zone VARCHAR, pen INTEGER, FOREIGN KEY (zone, pen) REFERENCES pens (zone, number))",
      "CREATE TABLE visits (animal INTEGER REFERENCES animals (id), seen TIMESTAMP NOT NULL, note VARCHAR)",
      "COMMENT ON COLUMN animals.name IS 'what the keepers call it'");

  private static FlightSqlFixture fixture;
  private static String url;

  @TempDir
  Path temp;

  @BeforeAll
  static void start() throws Exception {
    fixture = new FlightSqlFixture();
    url = "jdbc:arrow-flight-sql://127.0.0.1:" + fixture.flightSql.port() + "/?useEncryption=false&user="
        + FlightSqlFixture.USER + "&password=" + FlightSqlFixture.PASSWORD;
    try (Connection flight = DriverManager.getConnection(url); Statement statement = flight.createStatement()) {
      for (String sql : SCHEMA) {
        statement.execute(sql);
      }
    }
  }

  @AfterAll
  static void stop() throws Exception {
    fixture.close();
  }

  /** DuckDB in this process, with the same tables. */
  private static Connection duckdb() throws SQLException {
    Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
    try (Statement statement = duckdb.createStatement()) {
      for (String sql : SCHEMA) {
        statement.execute(sql);
      }
    }
    return duckdb;
  }

  // ---- every method answers

  /** An argument a tool would pass: names of this test's tables, the usual constants, null where JDBC allows. */
  private static Object argument(Method method, int index) {
    Class<?> type = method.getParameterTypes()[index];
    String name = method.getName();
    if (type == String.class) {
      return switch (name) {
        case "getPrimaryKeys", "getExportedKeys", "getBestRowIdentifier", "getVersionColumns", "getIndexInfo",
             "getColumnPrivileges" -> index == 2 ? "animals" : index == 3 ? "%" : null;
        case "getImportedKeys" -> index == 2 ? "visits" : null;
        case "getCrossReference" -> index == 2 ? "pens" : index == 5 ? "animals" : null;
        default -> index < 2 ? null : "%";
      };
    }
    if (type == int.class) {
      if (name.contains("Isolation")) {
        return Connection.TRANSACTION_READ_COMMITTED;
      } else if (name.equals("supportsConvert")) {
        return index == 0 ? Types.INTEGER : Types.BIGINT;
      } else if (name.contains("Holdability")) {
        return ResultSet.HOLD_CURSORS_OVER_COMMIT;
      } else if (name.equals("getBestRowIdentifier")) {
        return DatabaseMetaData.bestRowSession;
      } else if (name.equals("supportsResultSetConcurrency") && index == 1) {
        return ResultSet.CONCUR_READ_ONLY;
      }
      return ResultSet.TYPE_FORWARD_ONLY;
    }
    if (type == boolean.class) {
      return false;
    }
    if (type == Class.class) {
      return DatabaseMetaData.class;
    }
    return null;
  }

  /** Calls the method and reads what it returns (every cell of a result set); the failure, or null. */
  private static Throwable call(DatabaseMetaData meta, Method method) {
    Object[] arguments = new Object[method.getParameterCount()];
    for (int i = 0; i < arguments.length; i++) {
      arguments[i] = argument(method, i);
    }
    try {
      Object answer = method.invoke(meta, arguments);
      if (answer instanceof ResultSet rows) {
        try (rows) {
          int columns = rows.getMetaData().getColumnCount();
          while (rows.next()) {
            for (int column = 1; column <= columns; column++) {
              rows.getObject(column);
            }
          }
        }
      }
      return null;
    } catch (InvocationTargetException e) {
      return e.getCause();
    } catch (ReflectiveOperationException | SQLException | RuntimeException e) {
      return e;
    }
  }

  @Test
  void everyDatabaseMetaDataMethodAnswers() throws Exception {
    Map<String, String> failures = new LinkedHashMap<>();
    int methods = 0;
    try (Connection flight = DriverManager.getConnection(url)) {
      DatabaseMetaData meta = flight.getMetaData();
      for (Method method : DatabaseMetaData.class.getMethods()) {
        if (java.lang.reflect.Modifier.isStatic(method.getModifiers())) {
          continue;
        }
        methods++;
        Throwable failure = call(meta, method);
        if (failure != null) {
          failures.put(method.getName() + Arrays.toString(method.getParameterTypes()), failure.toString());
        }
      }
    }
    assertThat(methods).isGreaterThan(150);
    // Ten methods the driver's base (Avatica's DatabaseMetaData) never implemented: they throw in the client, asking
    // the server nothing. DuckDB's own driver refuses the first nine as well (SQLFeatureNotSupportedException).
    Map<String, String> unimplemented = new LinkedHashMap<>();
    for (String name : List.of("deletesAreDetected", "insertsAreDetected", "othersDeletesAreVisible",
        "othersInsertsAreVisible", "othersUpdatesAreVisible", "ownDeletesAreVisible", "ownInsertsAreVisible",
        "ownUpdatesAreVisible", "updatesAreDetected", "supportsResultSetHoldability")) {
      unimplemented.put(name + "[int]", "java.lang.RuntimeException: todo: implement this method");
    }
    assertThat(failures).as("%d methods called", methods).isEqualTo(unimplemented);
  }

  // ---- the server's SQL info is DuckDB's

  /** The methods whose answers come from the server's SQL info, each with no argument. */
  private static final List<String> SQL_INFO_ANSWERS = List.of("isReadOnly", "getIdentifierQuoteString",
      "getSearchStringEscape", "getExtraNameCharacters", "supportsColumnAliasing", "nullPlusNonNullIsNull",
      "supportsConvert", "supportsTableCorrelationNames", "supportsDifferentTableCorrelationNames",
      "supportsExpressionsInOrderBy", "supportsOrderByUnrelated", "supportsGroupBy", "supportsGroupByUnrelated",
      "supportsLikeEscapeClause", "supportsNonNullableColumns", "supportsMinimumSQLGrammar",
      "supportsCoreSQLGrammar", "supportsExtendedSQLGrammar", "supportsANSI92EntryLevelSQL",
      "supportsANSI92IntermediateSQL", "supportsANSI92FullSQL", "supportsIntegrityEnhancementFacility",
      "supportsOuterJoins", "supportsFullOuterJoins", "supportsLimitedOuterJoins", "getSchemaTerm",
      "getProcedureTerm", "getCatalogTerm", "isCatalogAtStart", "supportsSchemasInProcedureCalls",
      "supportsSchemasInIndexDefinitions", "supportsSchemasInPrivilegeDefinitions",
      "supportsCatalogsInIndexDefinitions", "supportsCatalogsInPrivilegeDefinitions", "supportsPositionedDelete",
      "supportsPositionedUpdate", "supportsSelectForUpdate", "supportsStoredProcedures",
      "supportsSubqueriesInComparisons", "supportsSubqueriesInExists", "supportsSubqueriesInIns",
      "supportsSubqueriesInQuantifieds", "supportsCorrelatedSubqueries", "supportsUnion", "supportsUnionAll",
      "getMaxBinaryLiteralLength", "getMaxCharLiteralLength", "getMaxColumnNameLength", "getMaxColumnsInGroupBy",
      "getMaxColumnsInIndex", "getMaxColumnsInOrderBy", "getMaxColumnsInSelect", "getMaxColumnsInTable",
      "getMaxConnections", "getMaxCursorNameLength", "getMaxIndexLength", "getMaxSchemaNameLength",
      "getMaxProcedureNameLength", "getMaxCatalogNameLength", "getMaxRowSize", "doesMaxRowSizeIncludeBlobs",
      "getMaxStatementLength", "getMaxStatements", "getMaxTableNameLength", "getMaxTablesInSelect",
      "getMaxUserNameLength", "supportsTransactions", "dataDefinitionCausesTransactionCommit",
      "dataDefinitionIgnoredInTransactions", "supportsBatchUpdates", "supportsSavepoints",
      "supportsNamedParameters", "supportsStoredFunctionsUsingCallSyntax");

  private static Map<String, Object> answers(DatabaseMetaData meta) throws Exception {
    Map<String, Object> answers = new LinkedHashMap<>();
    for (String name : SQL_INFO_ANSWERS) {
      answers.put(name, DatabaseMetaData.class.getMethod(name).invoke(meta));
    }
    for (int type : new int[] {ResultSet.TYPE_FORWARD_ONLY, ResultSet.TYPE_SCROLL_INSENSITIVE,
        ResultSet.TYPE_SCROLL_SENSITIVE}) {
      answers.put("supportsResultSetType(" + type + ")", meta.supportsResultSetType(type));
    }
    // TRANSACTION_NONE left out: DuckDB's driver says it is supported, which would mean no transactions at all.
    for (int level : new int[] {Connection.TRANSACTION_READ_UNCOMMITTED, Connection.TRANSACTION_READ_COMMITTED,
        Connection.TRANSACTION_REPEATABLE_READ, Connection.TRANSACTION_SERIALIZABLE}) {
      answers.put("supportsTransactionIsolationLevel(" + level + ")", meta.supportsTransactionIsolationLevel(level));
    }
    answers.put("supportsConvert(INTEGER, BIGINT)", meta.supportsConvert(Types.INTEGER, Types.BIGINT));
    answers.put("getSQLKeywords", names(meta.getSQLKeywords()));
    answers.put("getNumericFunctions", names(meta.getNumericFunctions()));
    answers.put("getStringFunctions", names(meta.getStringFunctions()));
    answers.put("getSystemFunctions", names(meta.getSystemFunctions()));
    answers.put("getTimeDateFunctions", names(meta.getTimeDateFunctions()));
    return answers;
  }

  /** A comma-separated list as a set (the drivers join and end it differently). */
  private static Set<String> names(String list) {
    Set<String> names = new TreeSet<>();
    for (String name : list.split(",")) {
      if (!name.isBlank()) {
        names.add(name.strip());
      }
    }
    return names;
  }

  @Test
  void theSqlInfoAnswersAreDuckDBsOwnDriversAnswers() throws Exception {
    try (Connection flight = DriverManager.getConnection(url); Connection duckdb = duckdb()) {
      Map<String, Object> ours = answers(flight.getMetaData());
      Map<String, Object> theirs = answers(duckdb.getMetaData());
      assertThat(ours).isEqualTo(theirs);
      assertThat(((Set<?>) ours.get("getSQLKeywords")).stream().map(k -> k.toString().toLowerCase(java.util.Locale.ROOT)))
          .contains("select", "pivot", "qualify");
      assertThat(((Set<?>) ours.get("getStringFunctions")).stream().map(Object::toString)).contains("lower",
          "regexp_matches");
      // Both say repeatable read: the Flight SQL driver passes on Flight SQL's number for it (3), not JDBC's (4).
      assertThat(duckdb.getMetaData().getDefaultTransactionIsolation())
          .isEqualTo(Connection.TRANSACTION_REPEATABLE_READ);
      assertThat(flight.getMetaData().getDefaultTransactionIsolation())
          .isEqualTo(SqlTransactionIsolationLevel.SQL_TRANSACTION_REPEATABLE_READ_VALUE);
    }
  }

  // ---- columns and keys are DuckDB's

  /** The named columns of every row, as text. */
  private static List<String> rows(ResultSet result, String... columns) throws SQLException {
    List<String> rows = new ArrayList<>();
    try (result) {
      while (result.next()) {
        StringBuilder row = new StringBuilder();
        for (String column : columns) {
          row.append(row.isEmpty() ? "" : " ").append(column).append('=').append(result.getString(column));
        }
        rows.add(row.toString());
      }
    }
    return rows;
  }

  @Test
  void columnsAreDuckDBsEvenNamedInUpperCase() throws Exception {
    String[] described = {"TABLE_CAT", "TABLE_SCHEM", "TABLE_NAME", "COLUMN_NAME", "TYPE_NAME", "NULLABLE",
        "IS_NULLABLE", "ORDINAL_POSITION", "REMARKS"};
    try (Connection flight = DriverManager.getConnection(url); Connection duckdb = duckdb()) {
      List<String> expected = rows(duckdb.getMetaData().getColumns(null, null, "animals", "%"), described);
      assertThat(expected).hasSize(6);
      assertThat(rows(flight.getMetaData().getColumns(null, null, "animals", "%"), described))
          .isEqualTo(expected);
      // What sqlline asks for `!columns animals` (the driver says it stores identifiers upper-case).
      assertThat(flight.getMetaData().storesUpperCaseIdentifiers()).isTrue();
      assertThat(rows(flight.getMetaData().getColumns(null, null, "ANIMALS", "%"), described))
          .isEqualTo(expected);
      // Every table's of the database, in DuckDB's order (the door lists no table of DuckDB's own `system` catalog).
      assertThat(rows(flight.getMetaData().getColumns("memory", "main", "%", "%"), described))
          .isEqualTo(rows(duckdb.getMetaData().getColumns("memory", "main", "%", "%"), described));
      // A DECIMAL's digits.
      String[] digits = {"COLUMN_NAME", "COLUMN_SIZE", "DECIMAL_DIGITS"};
      assertThat(rows(flight.getMetaData().getColumns(null, null, "pens", "area"), digits))
          .isEqualTo(rows(duckdb.getMetaData().getColumns(null, null, "pens", "area"), digits))
          .containsExactly("COLUMN_NAME=area COLUMN_SIZE=9 DECIMAL_DIGITS=2");
    }
  }

  @Test
  void primaryAndForeignKeysAreDuckDBs() throws Exception {
    String[] primary = {"TABLE_CAT", "TABLE_SCHEM", "TABLE_NAME", "COLUMN_NAME", "KEY_SEQ"};
    String[] foreign = {"PKTABLE_CAT", "PKTABLE_SCHEM", "PKTABLE_NAME", "PKCOLUMN_NAME", "FKTABLE_CAT",
        "FKTABLE_SCHEM", "FKTABLE_NAME", "FKCOLUMN_NAME", "KEY_SEQ", "UPDATE_RULE", "DELETE_RULE"};
    try (Connection flight = DriverManager.getConnection(url); Connection duckdb = duckdb()) {
      DatabaseMetaData ours = flight.getMetaData();
      DatabaseMetaData theirs = duckdb.getMetaData();
      assertThat(rows(ours.getPrimaryKeys(null, null, "pens"), primary))
          .isEqualTo(rows(theirs.getPrimaryKeys(null, null, "pens"), primary)).hasSize(2);
      assertThat(rows(ours.getPrimaryKeys(null, null, "PENS"), primary)).hasSize(2);
      assertThat(rows(ours.getImportedKeys(null, null, "animals"), foreign))
          .isEqualTo(rows(theirs.getImportedKeys(null, null, "animals"), foreign))
          .containsExactly(
              "PKTABLE_CAT=memory PKTABLE_SCHEM=main PKTABLE_NAME=pens PKCOLUMN_NAME=zone FKTABLE_CAT=memory"
                  + " FKTABLE_SCHEM=main FKTABLE_NAME=animals FKCOLUMN_NAME=zone KEY_SEQ=1 UPDATE_RULE=3 DELETE_RULE=3",
              "PKTABLE_CAT=memory PKTABLE_SCHEM=main PKTABLE_NAME=pens PKCOLUMN_NAME=number FKTABLE_CAT=memory"
                  + " FKTABLE_SCHEM=main FKTABLE_NAME=animals FKCOLUMN_NAME=pen KEY_SEQ=2 UPDATE_RULE=3 DELETE_RULE=3");
      assertThat(rows(ours.getExportedKeys(null, null, "animals"), foreign))
          .isEqualTo(rows(theirs.getExportedKeys(null, null, "animals"), foreign)).hasSize(1);
      assertThat(rows(ours.getCrossReference(null, null, "pens", null, null, "animals"), foreign))
          .isEqualTo(rows(theirs.getCrossReference(null, null, "pens", null, null, "animals"), foreign))
          .hasSize(2);
      assertThat(rows(ours.getCrossReference(null, null, "pens", null, null, "visits"), foreign)).isEmpty();
    }
  }

  @Test
  void sqllineListsTheColumnsOfATable() throws Exception {
    Path script = Files.writeString(temp.resolve("columns.sql"), "!columns animals\n!quit\n");
    try (ChildJvm sqlline = ChildJvm.start(sqlline.SqlLine.class, "-u", url, "-n", FlightSqlFixture.USER, "-p",
        FlightSqlFixture.PASSWORD, "--outputformat=csv", "--showHeader=true", "--run=" + script)) {
      List<String> output = sqlline.awaitExit(120);
      String printed = String.join("\n", output);
      assertThat(output.getFirst()).as(printed).isEqualTo("0");
      List<String> columns = output.stream().filter(line -> line.startsWith("'memory','main','animals',"))
          .map(line -> line.split(",")[3]).toList();
      assertThat(columns).as(printed).containsExactly("'id'", "'name'", "'weight'", "'born'", "'zone'", "'pen'");
    }
  }

  // ---- timestamps and times bound by the driver

  /** The values of a query, each cell as DuckDB prints it. */
  private static List<String> texts(Connection connection, String sql) throws SQLException {
    List<String> texts = new ArrayList<>();
    try (Statement statement = connection.createStatement(); ResultSet rows = statement.executeQuery(sql)) {
      while (rows.next()) {
        List<String> row = new ArrayList<>();
        for (int column = 1; column <= rows.getMetaData().getColumnCount(); column++) {
          row.add(rows.getString(column));
        }
        texts.add(String.join(" | ", row));
      }
    }
    return texts;
  }

  /** Inserts, updates and queries with bound timestamps and times; what the table then holds, as text. */
  private static List<String> bindTimes(Connection connection, String table) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      statement.execute("CREATE SCHEMA IF NOT EXISTS times");
      statement.execute("CREATE TABLE " + table + " (id INTEGER, moment TIMESTAMP, moment_ms TIMESTAMP_MS,"
          + " moment_ns TIMESTAMP_NS, moment_s TIMESTAMP_S, t TIME)");
    }
    Timestamp moment = Timestamp.valueOf("2024-01-02 03:04:01.123");
    java.sql.Time time = java.sql.Time.valueOf("03:04:05");
    try (PreparedStatement insert = connection.prepareStatement("INSERT INTO " + table
        + " VALUES (?, ?, ?, ?, ?, ?)")) {
      insert.setInt(1, 1);
      for (int column = 2; column <= 5; column++) {
        insert.setTimestamp(column, moment);
      }
      insert.setTime(6, time);
      assertThat(insert.executeUpdate()).isEqualTo(1);
    }
    try (PreparedStatement update = connection.prepareStatement("UPDATE " + table
        + " SET moment = ?, t = ? WHERE id = ?")) {
      update.setTimestamp(1, Timestamp.valueOf("1999-12-31 23:59:59.999"));
      update.setTime(2, java.sql.Time.valueOf("23:59:58"));
      update.setInt(3, 1);
      assertThat(update.executeUpdate()).isEqualTo(1);
    }
    List<String> texts = new ArrayList<>(texts(connection, "SELECT moment::VARCHAR, moment_ms::VARCHAR,"
        + " moment_ns::VARCHAR, moment_s::VARCHAR, t::VARCHAR FROM " + table));
    try (PreparedStatement query = connection.prepareStatement("SELECT count(*) FROM " + table
        + " WHERE moment_ms = ? AND t = ?")) {
      query.setTimestamp(1, moment);
      query.setTime(2, java.sql.Time.valueOf("23:59:58"));
      try (ResultSet rows = query.executeQuery()) {
        rows.next();
        texts.add("matched " + rows.getLong(1));
      }
    }
    return texts;
  }

  @Test
  void boundTimestampsAndTimesAreStoredAsDuckDBsDriverStoresThem() throws Exception {
    try (Connection flight = DriverManager.getConnection(url); Connection duckdb = duckdb()) {
      List<String> expected = bindTimes(duckdb, "times.moments");
      assertThat(expected).containsExactly(
          "1999-12-31 23:59:59.999 | 2024-01-02 03:04:01.123 | 2024-01-02 03:04:01.123 | 2024-01-02 03:04:01 | 23:59:58",
          "matched 1");
      assertThat(bindTimes(flight, "times.moments")).isEqualTo(expected);
    }
  }

  @Test
  void aTimestampKeepsTheMillisecondsTheDriverSends() throws Exception {
    // The Flight SQL JDBC driver hands on milliseconds only (Avatica's timestamps are epoch milliseconds): what it
    // sent of 03:04:01.123456 is stored, no longer a moment of January 1970.
    try (Connection flight = DriverManager.getConnection(url); Statement statement = flight.createStatement()) {
      statement.execute("CREATE SCHEMA IF NOT EXISTS times");
      statement.execute("CREATE TABLE times.precise (moment TIMESTAMP)");
      try (PreparedStatement insert = flight.prepareStatement("INSERT INTO times.precise VALUES (?)")) {
        insert.setTimestamp(1, Timestamp.valueOf("2024-01-02 03:04:01.123456"));
        assertThat(insert.executeUpdate()).isEqualTo(1);
      }
      assertThat(texts(flight, "SELECT moment::VARCHAR FROM times.precise")).containsExactly("2024-01-02 03:04:01.123");
    }
  }
}
