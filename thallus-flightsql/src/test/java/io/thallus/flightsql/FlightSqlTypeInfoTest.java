package io.thallus.flightsql;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.sql.FlightSqlProducer.Schemas;
import org.apache.arrow.flight.sql.impl.FlightSql.XdbcDataType;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.util.Text;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * GetXdbcTypeInfo through Arrow's Flight SQL client: DuckDB's types with the values ODBC's type info asks for,
 * against what DuckDB's own JDBC driver's {@code getTypeInfo} says where both speak of the same type, a type the
 * session created among them, and the data type filter.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class FlightSqlTypeInfoTest {
  private static FlightSqlFixture fixture;
  private static FlightSqlLogin login;

  @BeforeAll
  static void start() throws Exception {
    fixture = new FlightSqlFixture();
    login = FlightSqlLogin.of(fixture);
    login.sql().executeUpdate("CREATE TYPE mood AS ENUM ('sad', 'happy')", login.auth());
  }

  @AfterAll
  static void stop() throws Exception {
    try (FlightSqlFixture server = fixture) {
      login.close();
    }
  }

  /** Each row by type name, each column by its name (texts as String, lists as lists of String). */
  private static Map<String, Map<String, Object>> read(FlightInfo info) throws Exception {
    assertThat(info.getSchema()).isEqualTo(Schemas.GET_TYPE_INFO_SCHEMA);
    Map<String, Map<String, Object>> rows = new LinkedHashMap<>();
    for (FlightEndpoint endpoint : info.getEndpoints()) {
      try (FlightStream stream = login.sql().getStream(endpoint.getTicket(), login.auth())) {
        while (stream.next()) {
          VectorSchemaRoot root = stream.getRoot();
          assertThat(root.getSchema()).isEqualTo(Schemas.GET_TYPE_INFO_SCHEMA);
          for (int row = 0; row < root.getRowCount(); row++) {
            Map<String, Object> values = new LinkedHashMap<>();
            for (FieldVector vector : root.getFieldVectors()) {
              values.put(vector.getName(), plain(vector.getObject(row)));
            }
            rows.put((String) values.get("type_name"), values);
          }
        }
      }
    }
    return rows;
  }

  private static Object plain(Object value) {
    return switch (value) {
      case Text text -> text.toString();
      case List<?> list -> list.stream().map(Object::toString).toList();
      case null, default -> value;
    };
  }

  @Test
  void everyDuckDBTypeIsListedWithItsXdbcValues() throws Exception {
    Map<String, Map<String, Object>> types = read(login.sql().getXdbcTypeInfo(login.auth()));
    assertThat(types.keySet()).contains("BOOLEAN", "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT",
        "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT", "FLOAT", "DOUBLE", "DECIMAL", "VARCHAR", "BLOB",
        "DATE", "TIME", "TIME WITH TIME ZONE", "TIMESTAMP", "TIMESTAMP WITH TIME ZONE", "TIMESTAMP_NS", "INTERVAL",
        "UUID", "LIST", "STRUCT", "MAP", "BIGNUM", "mood")
        .doesNotContain("NULL", "TYPE", "TUPLE");
    // Ordered by data type, then name, as the spec asks.
    List<List<Object>> order = new ArrayList<>();
    types.values().forEach(row -> order.add(List.of(row.get("data_type"), row.get("type_name"))));
    assertThat(order).isSortedAccordingTo((a, b) -> ((Integer) a.get(0)).equals(b.get(0))
        ? ((String) a.get(1)).compareTo((String) b.get(1)) : Integer.compare((Integer) a.get(0), (Integer) b.get(0)));

    assertThat(types.get("INTEGER")).containsEntry("data_type", XdbcDataType.XDBC_INTEGER_VALUE)
        .containsEntry("column_size", 10).containsEntry("unsigned_attribute", false)
        .containsEntry("num_prec_radix", 10).containsEntry("minimum_scale", 0).containsEntry("maximum_scale", 0)
        .containsEntry("literal_prefix", null).containsEntry("create_params", null).containsEntry("nullable", 1)
        .containsEntry("auto_increment", false).containsEntry("sql_data_type", XdbcDataType.XDBC_INTEGER_VALUE);
    assertThat(types.get("UBIGINT")).containsEntry("data_type", XdbcDataType.XDBC_NUMERIC_VALUE)
        .containsEntry("column_size", 20).containsEntry("unsigned_attribute", true);
    assertThat(types.get("UTINYINT")).containsEntry("data_type", XdbcDataType.XDBC_SMALLINT_VALUE)
        .containsEntry("column_size", 3);
    assertThat(types.get("HUGEINT")).containsEntry("data_type", XdbcDataType.XDBC_NUMERIC_VALUE)
        .containsEntry("column_size", 39).containsEntry("unsigned_attribute", false);
    assertThat(types.get("FLOAT")).containsEntry("data_type", XdbcDataType.XDBC_REAL_VALUE)
        .containsEntry("column_size", 24).containsEntry("num_prec_radix", 2);
    assertThat(types.get("DOUBLE")).containsEntry("data_type", XdbcDataType.XDBC_DOUBLE_VALUE)
        .containsEntry("column_size", 53);
    assertThat(types.get("DECIMAL")).containsEntry("data_type", XdbcDataType.XDBC_DECIMAL_VALUE)
        .containsEntry("column_size", 38).containsEntry("create_params", List.of("width", "scale"))
        .containsEntry("minimum_scale", 0).containsEntry("maximum_scale", 38);
    assertThat(types.get("VARCHAR")).containsEntry("data_type", XdbcDataType.XDBC_VARCHAR_VALUE)
        .containsEntry("case_sensitive", true).containsEntry("searchable", 3).containsEntry("literal_prefix", "'")
        .containsEntry("literal_suffix", "'").containsEntry("create_params", List.of("length"))
        .containsEntry("unsigned_attribute", null).containsEntry("num_prec_radix", null);
    assertThat(types.get("mood")).containsEntry("data_type", XdbcDataType.XDBC_VARCHAR_VALUE)
        .containsEntry("case_sensitive", true);
    assertThat(types.get("INTEGER")).containsEntry("case_sensitive", false).containsEntry("searchable", 2);
    assertThat(types.get("TIMESTAMP WITH TIME ZONE"))
        .containsEntry("data_type", XdbcDataType.XDBC_TIMESTAMP_VALUE)
        .containsEntry("sql_data_type", XdbcDataType.XDBC_DATETIME_VALUE).containsEntry("datetime_subcode", 5)
        .containsEntry("column_size", 32);
    assertThat(types.get("TIMESTAMP_NS")).containsEntry("column_size", 29).containsEntry("datetime_subcode", 3);
    assertThat(types.get("TIME")).containsEntry("data_type", XdbcDataType.XDBC_TIME_VALUE)
        .containsEntry("column_size", 15).containsEntry("datetime_subcode", 2);
    assertThat(types.get("DATE")).containsEntry("data_type", XdbcDataType.XDBC_DATE_VALUE)
        .containsEntry("column_size", 10).containsEntry("datetime_subcode", 1);
    assertThat(types.get("INTERVAL")).containsEntry("data_type", XdbcDataType.XDBC_INTERVAL_VALUE)
        .containsEntry("sql_data_type", XdbcDataType.XDBC_INTERVAL_VALUE);
    assertThat(types.get("LIST")).containsEntry("data_type", XdbcDataType.XDBC_UNKNOWN_TYPE_VALUE)
        .containsEntry("create_params", List.of("child"));
  }

  /**
   * DuckDB's driver lists, for each JDBC type, the DuckDB type it binds as; where that type is one of ours, its
   * data type is among the ones DuckDB's driver gives it. FLOAT is the exception: DuckDB's driver gives its
   * four-byte FLOAT both JDBC's FLOAT (6, which JDBC defines as double precision) and REAL (7); ODBC's REAL is the
   * one of its size.
   */
  @Test
  void dataTypesAgreeWithDuckDBsOwnDriver() throws Exception {
    Map<String, Map<String, Object>> ours = read(login.sql().getXdbcTypeInfo(login.auth()));
    Map<String, Set<Integer>> theirs = new TreeMap<>();
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
         ResultSet types = duckdb.getMetaData().getTypeInfo()) {
      while (types.next()) {
        theirs.computeIfAbsent(types.getString("TYPE_NAME"), name -> new TreeSet<>()).add(types.getInt("DATA_TYPE"));
      }
    }
    assertThat(theirs.get("REAL")).containsExactly(XdbcDataType.XDBC_REAL_VALUE);
    assertThat(ours.get("FLOAT")).containsEntry("data_type", XdbcDataType.XDBC_REAL_VALUE);
    theirs.remove("FLOAT");
    theirs.keySet().retainAll(ours.keySet());
    assertThat(theirs.keySet()).contains("BOOLEAN", "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "DOUBLE", "DECIMAL",
        "VARCHAR", "DATE", "TIME", "TIMESTAMP", "BLOB");
    for (Map.Entry<String, Set<Integer>> type : theirs.entrySet()) {
      assertThat(type.getValue()).as(type.getKey()).contains((Integer) ours.get(type.getKey()).get("data_type"));
    }
  }

  @Test
  void theDataTypeFilterKeepsOnlyThatType() throws Exception {
    Map<String, Map<String, Object>> integers =
        read(login.sql().getXdbcTypeInfo(XdbcDataType.XDBC_INTEGER_VALUE, login.auth()));
    assertThat(integers.keySet()).containsExactly("INTEGER", "USMALLINT");
    assertThat(read(login.sql().getXdbcTypeInfo(12345, login.auth()))).isEmpty();
  }

  /**
   * The Arrow Flight SQL JDBC driver (18.3) does not send GetXdbcTypeInfo: its {@code getTypeInfo} is Avatica's,
   * an empty result with JDBC's 18 columns, whatever the server has. It answers, without an exception.
   */
  @Test
  void theFlightSqlJdbcDriversGetTypeInfoAnswersWithJdbcsColumns() throws Exception {
    String url = "jdbc:arrow-flight-sql://127.0.0.1:" + fixture.flightSql.port() + "/?useEncryption=false&user="
        + FlightSqlFixture.USER + "&password=" + FlightSqlFixture.PASSWORD;
    try (Connection connection = DriverManager.getConnection(url);
         ResultSet types = connection.getMetaData().getTypeInfo()) {
      assertThat(types.getMetaData().getColumnCount()).isEqualTo(18);
      assertThat(types.getMetaData().getColumnName(1)).isEqualTo("TYPE_NAME");
    }
  }
}
