package io.thallus.spark;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.unsafe.types.CalendarInterval;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every DuckDB type the README's table lists, read through Spark and compared value by value with the same SQL
 * run in a DuckDB of its own through DuckDB's JDBC driver (no Thallus, no Arrow, no Spark on that side).
 */
class TypeMappingTest {
  /** Column, DuckDB expression over i, the Spark type the README promises. */
  record Column(String name, String expression, String sparkType) {}

  static final List<Column> COLUMNS = List.of(
      new Column("c_boolean", "i % 2 = 0", "boolean"),
      new Column("c_tinyint", "(i % 256 - 128)::TINYINT", "tinyint"),
      new Column("c_smallint", "(i * 7 % 65536 - 32768)::SMALLINT", "smallint"),
      new Column("c_integer", "(i::BIGINT * 2654435761 % 4294967296 - 2147483648)::INTEGER", "int"),
      new Column("c_bigint", "((i::HUGEINT * 6364136223846793005) % 18446744073709551616 - 9223372036854775808)::BIGINT",
          "bigint"),
      new Column("c_utinyint", "(i % 256)::UTINYINT", "smallint"),
      new Column("c_usmallint", "(i * 7 % 65536)::USMALLINT", "int"),
      new Column("c_uinteger", "(i::BIGINT * 2654435761 % 4294967296)::UINTEGER", "bigint"),
      new Column("c_ubigint", "(18446744073709551615 - i::HUGEINT * 1000003)::UBIGINT", "decimal(20,0)"),
      new Column("c_hugeint", "((i % 997)::HUGEINT * 17014118346046923173168730371588410 - 17 - i)::HUGEINT",
          "decimal(38,0)"),
      new Column("c_uhugeint", "((i % 997)::UHUGEINT * 340282366920938463463374607431768 + i)::UHUGEINT",
          "decimal(38,0)"),
      new Column("c_float", "(i / 7.0)::FLOAT", "float"),
      new Column("c_double", "(i / 3.0 - 1e10)::DOUBLE", "double"),
      new Column("c_decimal_4_1", "((i % 1999) / 10 - 99.9)::DECIMAL(4,1)", "decimal(4,1)"),
      new Column("c_decimal_18_3", "(i * 1234567.891 - 99999999999.999)::DECIMAL(18,3)", "decimal(18,3)"),
      new Column("c_decimal_38_10", "(i::DECIMAL(38,10) * 12345678901234.5678901234 - 1)::DECIMAL(38,10)",
          "decimal(38,10)"),
      new Column("c_varchar", "CASE i % 4 WHEN 0 THEN '' WHEN 1 THEN 'row ' || i WHEN 2 THEN repeat('long text ', 50)"
          + " || i ELSE 'ünïcødé ✓ 日本語 🦆 ' || i END", "string"),
      new Column("c_blob", "('\\x00\\xFF' || i::VARCHAR)::BLOB", "binary"),
      new Column("c_date", "DATE '1970-01-01' + (i * 37 % 100000 - 50000)::INTEGER", "date"),
      new Column("c_time", "TIME '00:00:00' + INTERVAL (i * 1234567 % 86400000000) MICROSECONDS", "string"),
      new Column("c_timestamp", "TIMESTAMP '2000-01-01' + INTERVAL (i * 987654321) MICROSECONDS", "timestamp_ntz"),
      new Column("c_timestamp_s", "(TIMESTAMP '1990-06-01' + INTERVAL (i * 3601) SECONDS)::TIMESTAMP_S",
          "timestamp_ntz"),
      new Column("c_timestamp_ms", "(TIMESTAMP '2010-06-01' + INTERVAL (i * 1001) MILLISECONDS)::TIMESTAMP_MS",
          "timestamp_ntz"),
      new Column("c_timestamp_ns", "(TIMESTAMP '2020-06-01' + INTERVAL (i * 1001) MICROSECONDS)::TIMESTAMP_NS",
          "timestamp_ntz"),
      new Column("c_timestamptz", "(TIMESTAMPTZ '2021-03-04 05:06:07+00' + INTERVAL (i * 77777) SECONDS)",
          "timestamp"),
      new Column("c_interval", "INTERVAL (i % 13) MONTHS + INTERVAL (i % 29) DAYS + INTERVAL (i * 1001) MICROSECONDS",
          "interval"),
      new Column("c_uuid", "('00000000-0000-4000-8000-' || lpad(i::VARCHAR, 12, '0'))::UUID", "string"),
      new Column("c_enum", "(['sad', 'ok', 'happy'])[i % 3 + 1]::ENUM('sad', 'ok', 'happy')", "string"),
      new Column("c_list", "CASE WHEN i % 6 = 1 THEN []::INTEGER[] ELSE [i::INTEGER, NULL, (i * 2)::INTEGER] END",
          "array<int>"),
      new Column("c_list_varchar", "['a' || i, NULL, '']", "array<string>"),
      new Column("c_struct", "{'id': i, 'name': 'n' || i, 'inner': {'flag': i % 2 = 1}}",
          "struct<id:bigint,name:string,inner:struct<flag:boolean>>"),
      new Column("c_map", "MAP {'k' || i: i::INTEGER, 'z': NULL}", "map<string,int>"),
      new Column("c_list_of_struct", "[{'x': i, 'y': [i::VARCHAR, 'y']}, NULL]",
          "array<struct<x:bigint,y:array<string>>>"),
      new Column("c_array", "[i::INTEGER, (i + 1)::INTEGER, (i + 2)::INTEGER]::INTEGER[3]", "array<int>"),
      new Column("c_nested_casts", "{'u': (i % 200)::UTINYINT, 'e': (['sad', 'ok'])[i % 2 + 1]::ENUM('sad', 'ok'),"
          + " 'ts': [(TIMESTAMP '2020-01-01' + INTERVAL (i) SECONDS)::TIMESTAMP_MS]}",
          "struct<u:smallint,e:string,ts:array<timestamp_ntz>>"));

  static final int ROWS = 2000;

  static String sql() {
    String columns = COLUMNS.stream()
        .map(c -> "CASE WHEN i % 5 = 3 THEN NULL ELSE " + c.expression() + " END AS " + c.name())
        .collect(Collectors.joining(",\n  "));
    return "SELECT i AS row_id,\n  " + columns + "\nFROM range(" + ROWS + ") t(i)";
  }

  private static TestServer server;
  private static SparkSession spark;

  @BeforeAll
  static void start() {
    server = new TestServer();
    spark = TestSpark.session();
  }

  @AfterAll
  static void stop() throws Exception {
    server.close();
  }

  @Test
  void everyTypeArrivesWithTheDocumentedSparkTypeAndDuckDBsValues() throws SQLException {
    Dataset<Row> df = spark.read().format("thallus").option("url", server.url()).option("query", sql())
        .option("batchRows", "300").option("partitions", "2").load();
    StructField[] fields = df.schema().fields();
    assertThat(fields[0].dataType().simpleString()).isEqualTo("bigint");
    for (int c = 0; c < COLUMNS.size(); c++) {
      assertThat(fields[c + 1].name()).isEqualTo(COLUMNS.get(c).name());
      assertThat(fields[c + 1].dataType().simpleString()).as(COLUMNS.get(c).name()).isEqualTo(COLUMNS.get(c).sparkType());
    }
    List<Row> rows = df.orderBy("row_id").collectAsList();
    List<List<Object>> expected = duckdb(sql() + " ORDER BY i");
    assertThat(rows).hasSize(ROWS);
    for (int r = 0; r < ROWS; r++) {
      Row row = rows.get(r);
      for (int c = 0; c <= COLUMNS.size(); c++) {
        String name = c == 0 ? "row_id" : COLUMNS.get(c - 1).name();
        Object actual = normalize(row.get(c));
        Object wanted = expected.get(r).get(c);
        if (name.equals("c_time") && actual != null) {
          actual = LocalTime.parse((String) actual).toString(); // TIME arrives as DuckDB's text
        }
        if (name.equals("c_interval") && wanted != null) {
          wanted = interval((String) wanted); // DuckDB's JDBC driver gives INTERVAL as its text
        }
        assertThat(actual).as("row %d column %s", r, name).isEqualTo(wanted);
      }
    }
    assertThat(Connector.allocatedBytes()).isZero();
  }

  /** The reference: DuckDB's JDBC driver in a database of its own, values normalized like Spark's. */
  static List<List<Object>> duckdb(String sql) throws SQLException {
    List<List<Object>> rows = new ArrayList<>();
    try (Connection connection = DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = connection.createStatement()) {
      statement.execute("SET TimeZone = 'UTC'");
      try (ResultSet rs = statement.executeQuery(sql)) {
        int count = rs.getMetaData().getColumnCount();
        while (rs.next()) {
          List<Object> row = new ArrayList<>(count);
          for (int c = 1; c <= count; c++) {
            String type = rs.getMetaData().getColumnTypeName(c);
            Object value = switch (type) {
              case "TIMESTAMP WITH TIME ZONE" -> rs.getObject(c, OffsetDateTime.class);
              case "TIMESTAMP", "TIMESTAMP_S", "TIMESTAMP_MS", "TIMESTAMP_NS" -> rs.getObject(c, LocalDateTime.class);
              case "DATE" -> rs.getObject(c, LocalDate.class);
              case "TIME" -> rs.getObject(c, LocalTime.class);
              case "BLOB" -> rs.getBytes(c);
              default -> rs.getObject(c);
            };
            row.add(rs.wasNull() ? null : normalize(value));
          }
          rows.add(row);
        }
      }
    }
    return rows;
  }

  /** DuckDB's interval text ("1 year 2 months 3 days 00:00:01.5") in CalendarInterval's terms. */
  static String interval(String text) {
    long months = 0;
    long days = 0;
    long micros = 0;
    String[] tokens = text.trim().split("\\s+");
    for (int i = 0; i < tokens.length; i++) {
      if (tokens[i].contains(":")) {
        String[] hms = tokens[i].split(":");
        BigDecimal seconds = new BigDecimal(hms[2]).add(BigDecimal.valueOf(Long.parseLong(hms[1]) * 60))
            .add(BigDecimal.valueOf(Long.parseLong(hms[0]) * 3600));
        micros = seconds.movePointRight(6).longValueExact();
      } else {
        long n = Long.parseLong(tokens[i]);
        String unit = tokens[++i];
        if (unit.startsWith("year")) {
          months += 12 * n;
        } else if (unit.startsWith("mon")) {
          months += n;
        } else if (unit.startsWith("day")) {
          days += n;
        } else {
          throw new AssertionError("unexpected interval unit in " + text);
        }
      }
    }
    return "interval " + months + " months " + days + " days " + micros + " us";
  }

  /** Spark's and JDBC's values as comparable plain values. */
  static Object normalize(Object value) {
    try {
      return switch (value) {
        case null -> null;
        case Byte b -> new BigDecimal(b).toPlainString();
        case Short s -> new BigDecimal(s).toPlainString();
        case Integer i -> new BigDecimal(i).toPlainString();
        case Long l -> new BigDecimal(l).toPlainString();
        case BigInteger b -> new BigDecimal(b).toPlainString();
        case BigDecimal d -> d.signum() == 0 ? "0" : d.stripTrailingZeros().toPlainString();
        case Float f -> "float " + f;
        case Double d -> "double " + d;
        case byte[] bytes -> "0x" + HexFormat.of().formatHex(bytes);
        case LocalTime t -> t.toString();
        case LocalDate d -> d.toString();
        case LocalDateTime t -> t.toString();
        case java.sql.Timestamp t -> t.toLocalDateTime().toString();
        case java.sql.Date d -> d.toLocalDate().toString();
        case OffsetDateTime t -> t.toInstant().toString();
        case java.time.Instant t -> t.toString();
        case java.util.UUID u -> u.toString();
        case CalendarInterval iv -> "interval " + iv.months + " months " + iv.days + " days " + iv.microseconds + " us";
        case org.duckdb.DuckDBColumnType t -> t.toString();
        case Row row -> {
          List<Object> values = new ArrayList<>();
          for (int i = 0; i < row.size(); i++) {
            values.add(normalize(row.get(i)));
          }
          yield values;
        }
        case java.sql.Struct struct -> {
          List<Object> values = new ArrayList<>();
          for (Object attribute : struct.getAttributes()) {
            values.add(normalize(attribute));
          }
          yield values;
        }
        case java.sql.Array array -> normalize(java.util.Arrays.asList((Object[]) array.getArray()));
        case scala.collection.Seq<?> seq -> normalize(scala.jdk.javaapi.CollectionConverters.asJava(seq));
        case scala.collection.Map<?, ?> map -> normalize(scala.jdk.javaapi.CollectionConverters.asJava(map));
        case List<?> list -> list.stream().map(TypeMappingTest::normalize).collect(Collectors.toList());
        case Map<?, ?> map -> {
          Map<String, Object> sorted = new TreeMap<>();
          map.forEach((k, v) -> sorted.put(String.valueOf(normalize(k)), normalize(v)));
          yield sorted;
        }
        default -> value;
      };
    } catch (SQLException e) {
      throw new AssertionError(e);
    }
  }
}
