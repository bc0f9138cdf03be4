package io.thallus.conformance;

import java.util.List;
import java.util.stream.Collectors;

/**
 * One SQL query whose columns cover every DuckDB type that maps to Arrow, each NULL on some rows. Deterministic,
 * so Thallus and a separate DuckDB run directly produce the same values.
 */
public final class TypeTable {
  private TypeTable() {}

  /** Column name and the DuckDB expression over {@code i} (the row number) that fills it. */
  public record Column(String name, String expression) {}

  public static final List<Column> COLUMNS = List.of(
      new Column("c_boolean", "i % 2 = 0"),
      new Column("c_tinyint", "(i % 256 - 128)::TINYINT"),
      new Column("c_smallint", "(i * 7 % 65536 - 32768)::SMALLINT"),
      new Column("c_integer", "(i::BIGINT * 2654435761 % 4294967296 - 2147483648)::INTEGER"),
      new Column("c_bigint", "((i::HUGEINT * 6364136223846793005) % 18446744073709551616 - 9223372036854775808)::BIGINT"),
      new Column("c_utinyint", "(i % 256)::UTINYINT"),
      new Column("c_usmallint", "(i * 7 % 65536)::USMALLINT"),
      new Column("c_uinteger", "(i::BIGINT * 2654435761 % 4294967296)::UINTEGER"),
      new Column("c_ubigint", "(18446744073709551615 - i::HUGEINT * 1000003)::UBIGINT"),
      new Column("c_hugeint", "((i % 997)::HUGEINT * 170141183460469231731687303715884105 - 17 - i)::HUGEINT"),
      new Column("c_uhugeint", "((i % 997)::UHUGEINT * 340282366920938463463374607431768 + i)::UHUGEINT"),
      new Column("c_float", "(i / 7.0)::FLOAT"),
      new Column("c_double", "(i / 3.0 - 1e10)::DOUBLE"),
      new Column("c_decimal_4_1", "((i % 1999) / 10 - 99.9)::DECIMAL(4,1)"),
      new Column("c_decimal_9_4", "(i / 10000.0 - 12345.6789)::DECIMAL(9,4)"),
      new Column("c_decimal_18_3", "(i * 1234567.891 - 99999999999.999)::DECIMAL(18,3)"),
      new Column("c_decimal_38_10", "(i::DECIMAL(38,10) * 12345678901234.5678901234 - 1)::DECIMAL(38,10)"),
      new Column("c_varchar", "CASE i % 4 WHEN 0 THEN '' WHEN 1 THEN 'row ' || i WHEN 2 THEN repeat('long text ', 50) || i"
          + " ELSE 'ünïcødé ✓ 日本語 🦆 ' || i END"),
      new Column("c_blob", "('\\x00\\xFF' || i::VARCHAR)::BLOB"),
      new Column("c_date", "DATE '1970-01-01' + (i * 37 % 100000 - 50000)::INTEGER"),
      new Column("c_time", "TIME '00:00:00' + INTERVAL (i * 1234567 % 86400000000) MICROSECONDS"),
      new Column("c_timestamp", "TIMESTAMP '2000-01-01' + INTERVAL (i * 987654321) MICROSECONDS"),
      new Column("c_timestamp_s", "(TIMESTAMP '1990-06-01' + INTERVAL (i * 3601) SECONDS)::TIMESTAMP_S"),
      new Column("c_timestamp_ms", "(TIMESTAMP '2010-06-01' + INTERVAL (i * 1001) MILLISECONDS)::TIMESTAMP_MS"),
      new Column("c_timestamp_ns", "(TIMESTAMP '2020-06-01' + INTERVAL (i * 1001) MICROSECONDS)::TIMESTAMP_NS"),
      new Column("c_timestamptz", "(TIMESTAMPTZ '2021-03-04 05:06:07+00' + INTERVAL (i * 77777) SECONDS)"),
      new Column("c_interval", "INTERVAL (i % 13) MONTHS + INTERVAL (i % 29) DAYS + INTERVAL (i * 1001) MICROSECONDS"),
      new Column("c_uuid", "('00000000-0000-4000-8000-' || lpad(i::VARCHAR, 12, '0'))::UUID"),
      new Column("c_enum", "(['sad', 'ok', 'happy'])[i % 3 + 1]::ENUM('sad', 'ok', 'happy')"),
      new Column("c_list", "CASE WHEN i % 6 = 1 THEN []::INTEGER[] ELSE [i::INTEGER, NULL, (i * 2)::INTEGER] END"),
      new Column("c_list_varchar", "['a' || i, NULL, '']"),
      new Column("c_struct", "{'id': i, 'name': 'n' || i, 'inner': {'flag': i % 2 = 1}}"),
      new Column("c_map", "MAP {'k' || i: i::INTEGER, 'z': NULL}"),
      new Column("c_list_of_struct", "[{'x': i, 'y': [i::VARCHAR, 'y']}, NULL]"),
      new Column("c_struct_of_list", "{'values': [i, i + 1], 'tags': MAP {'t': [1.5::DOUBLE]}}"),
      new Column("c_array", "[i::INTEGER, (i + 1)::INTEGER, (i + 2)::INTEGER]::INTEGER[3]"));

  /** The type table with {@code rows} rows; every column is NULL where {@code i % 5 = 3}. */
  public static String sql(long rows) {
    String columns = COLUMNS.stream()
        .map(c -> "CASE WHEN i % 5 = 3 THEN NULL ELSE " + c.expression() + " END AS " + c.name())
        .collect(Collectors.joining(",\n  "));
    return "SELECT i AS row_id,\n  " + columns + "\nFROM range(" + rows + ") t(i) ORDER BY i";
  }
}
