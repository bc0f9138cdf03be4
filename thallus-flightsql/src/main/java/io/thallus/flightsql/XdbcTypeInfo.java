package io.thallus.flightsql;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import org.apache.arrow.flight.sql.FlightSqlProducer.Schemas;
import org.apache.arrow.flight.sql.impl.FlightSql.Nullable;
import org.apache.arrow.flight.sql.impl.FlightSql.Searchable;
import org.apache.arrow.flight.sql.impl.FlightSql.XdbcDataType;
import org.apache.arrow.flight.sql.impl.FlightSql.XdbcDatetimeSubcode;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * Flight SQL's GetXdbcTypeInfo: one row per type the caller's DuckDB knows, read from its {@code duckdb_types()} at
 * each call, so a DuckDB with more types (or a session with its own {@code CREATE TYPE}) answers them. DuckDB says
 * each type's name, size in bytes, category and the parameters it takes; what ODBC's type info asks beyond that
 * (which XDBC type a DuckDB type is, its precision, literal quotes) is derived here from those, and where DuckDB says
 * nothing the choice is explained where it is made.
 */
final class XdbcTypeInfo {
  /**
   * Each built-in type (named as DuckDB names it, {@code TIMESTAMP WITH TIME ZONE}) with the parameters of its
   * longest overload ({@code DECIMAL(width, scale)}; VARCHAR takes a length or a collation, and the length is the
   * one a column is declared with), then each type a user created (an ENUM, an alias), which takes none. DuckDB
   * lists three types no value has: NULL (of the literal NULL), TYPE (of a type expression) and TUPLE (internal);
   * they are left out.
   */
  private static final String TYPES = "SELECT logical_type AS name, logical_type, max(type_size),"
      + " any_value(type_category), (list(parameters ORDER BY len(parameters) DESC, parameters DESC)"
      + " FILTER (WHERE type_name = lower(logical_type)))[1]"
      + " FROM duckdb_types() WHERE internal AND logical_type NOT IN ('NULL', 'TYPE', 'TUPLE') GROUP BY logical_type"
      + " UNION ALL SELECT DISTINCT type_name, logical_type, type_size, type_category, NULL::VARCHAR[]"
      + " FROM duckdb_types() WHERE NOT internal";

  private XdbcTypeInfo() {}

  /** The types whose data type is {@code dataType} (all with null), ordered by data type, then name. */
  static VectorSchemaRoot of(FlightSession session, Integer dataType) {
    List<List<Object>> rows = new ArrayList<>();
    for (List<Object> type : Metadata.rows(session, TYPES, List.of())) {
      List<Object> row = row((String) type.get(0), (String) type.get(1), (Long) type.get(2), (String) type.get(3),
          type.get(4) == null ? null : ((List<?>) type.get(4)).stream().map(Object::toString).toList());
      if (dataType == null || dataType.equals(row.get(1))) {
        rows.add(row);
      }
    }
    rows.sort(Comparator.comparing((List<Object> row) -> (Integer) row.get(1))
        .thenComparing(row -> (String) row.get(0)));
    return Metadata.fill(Schemas.GET_TYPE_INFO_SCHEMA, rows, session.allocator());
  }

  /** One row of {@link Schemas#GET_TYPE_INFO_SCHEMA} for DuckDB type {@code name} of logical type {@code logical}. */
  private static List<Object> row(String name, String logical, Long size, String category, List<String> params) {
    Shape shape = shape(logical, size, category);
    boolean numeric = shape.radix != null;
    return Arrays.asList(name, shape.type.getNumber(), shape.columnSize, shape.quoted ? "'" : null,
        shape.quoted ? "'" : null, params == null || params.isEmpty() ? null : params,
        // Every DuckDB type holds NULL; only a column's NOT NULL refuses it.
        Nullable.NULLABILITY_NULLABLE_VALUE,
        // Strings compare by their bytes unless a collation is asked for: 'a' <> 'A'.
        shape.text, shape.text ? Searchable.SEARCHABLE_FULL_VALUE : Searchable.SEARCHABLE_BASIC_VALUE,
        numeric ? shape.unsigned : null, false,
        // DuckDB numbers a column from a SEQUENCE it names, never by its type.
        numeric ? Boolean.FALSE : null,
        null, shape.minScale, shape.maxScale, sqlDataType(shape.type), shape.subcode == null ? null
            : shape.subcode.getNumber(), shape.radix, null);
  }

  /** ODBC gives datetimes and intervals a generic SQL data type; the subcode says which. */
  private static int sqlDataType(XdbcDataType type) {
    return switch (type) {
      case XDBC_DATE, XDBC_TIME, XDBC_TIMESTAMP -> XdbcDataType.XDBC_DATETIME_VALUE;
      default -> type.getNumber();
    };
  }

  /** What ODBC's type info says of a type, as far as it differs between types. */
  private record Shape(XdbcDataType type, Integer columnSize, boolean quoted, boolean text, Boolean unsigned,
      Integer minScale, Integer maxScale, Integer radix, XdbcDatetimeSubcode subcode) {
    static Shape other(XdbcDataType type, Integer columnSize, boolean quoted) {
      return new Shape(type, columnSize, quoted, false, null, null, null, null, null);
    }
  }

  private static Shape shape(String logical, Long size, String category) {
    if ("NUMERIC".equals(category)) {
      return number(logical, size);
    }
    if ("DATETIME".equals(category)) {
      return datetime(logical);
    }
    return switch (logical) {
      case "BOOLEAN" -> Shape.other(XdbcDataType.XDBC_BIT, 1, false);
      // An ENUM's values are strings (they travel as dictionary-encoded strings); a VARCHAR's declared length is
      // ignored by DuckDB, so neither has a column size.
      case "VARCHAR", "ENUM" -> new Shape(XdbcDataType.XDBC_VARCHAR, null, true, true, null, null, null, null, null);
      case "BLOB" -> Shape.other(XdbcDataType.XDBC_VARBINARY, null, true);
      // An integer of any size: DuckDB bounds it by bytes, not by a number of digits it states.
      case "BIGNUM" -> new Shape(XdbcDataType.XDBC_NUMERIC, null, false, false, false, 0, 0, 10, null);
      // A UUID reads as its 36 characters; ODBC's GUID type is not among Flight SQL's.
      case "UUID" -> Shape.other(XdbcDataType.XDBC_UNKNOWN_TYPE, 36, true);
      // BIT strings, GEOMETRY, VARIANT and the nested types (LIST, ARRAY, STRUCT, MAP, UNION) have no XDBC type.
      default -> Shape.other(XdbcDataType.XDBC_UNKNOWN_TYPE, null, "BIT".equals(logical));
    };
  }

  /**
   * A DuckDB number: an integer's precision is the digits of its largest value, from its size and sign (UBIGINT's
   * 20); its XDBC type the narrowest signed one that holds every value (UTINYINT a SMALLINT, UBIGINT, HUGEINT and
   * UHUGEINT a NUMERIC), as DuckDB's own JDBC driver reads them. Floats have the bits of an IEEE 754 significand.
   * DECIMAL's widest is 38 digits, which DuckDB documents but does not list.
   */
  private static Shape number(String logical, Long size) {
    switch (logical) {
      case "FLOAT", "DOUBLE" -> {
        boolean single = size == 4;
        return new Shape(single ? XdbcDataType.XDBC_REAL : XdbcDataType.XDBC_DOUBLE, single ? 24 : 53, false, false,
            false, null, null, 2, null);
      }
      case "DECIMAL" -> {
        return new Shape(XdbcDataType.XDBC_DECIMAL, 38, false, false, false, 0, 38, 10, null);
      }
      default -> {
        boolean unsigned = logical.startsWith("U");
        int bits = Math.toIntExact(size * 8);
        int digits = BigInteger.TWO.pow(unsigned ? bits : bits - 1).subtract(BigInteger.ONE).toString().length();
        int signedBits = unsigned ? bits + 1 : bits;
        XdbcDataType type = signedBits <= 8 ? XdbcDataType.XDBC_TINYINT
            : signedBits <= 16 ? XdbcDataType.XDBC_SMALLINT
            : signedBits <= 32 ? XdbcDataType.XDBC_INTEGER
            : signedBits <= 64 ? XdbcDataType.XDBC_BIGINT : XdbcDataType.XDBC_NUMERIC;
        return new Shape(type, digits, false, false, unsigned, 0, 0, 10, null);
      }
    }
  }

  /**
   * A date, time, timestamp or interval. The column size is the characters of its text form as DuckDB writes it,
   * its second's fraction as long as its unit is fine ({@code _S} none, {@code _MS} 3, {@code _NS} 9, else DuckDB's
   * microseconds, 6), and {@code +hh:mm} with a time zone. An interval has no size: DuckDB's holds months, days and
   * microseconds at once, which no single ODBC interval subtype is (its subcode is unknown).
   */
  private static Shape datetime(String logical) {
    if (logical.equals("INTERVAL")) {
      return new Shape(XdbcDataType.XDBC_INTERVAL, null, true, false, null, null, null, null,
          XdbcDatetimeSubcode.XDBC_SUBCODE_UNKNOWN);
    }
    if (logical.equals("DATE")) {
      return new Shape(XdbcDataType.XDBC_DATE, 10, true, false, null, null, null, null,
          XdbcDatetimeSubcode.XDBC_SUBCODE_DATE);
    }
    boolean zoned = logical.contains("TIME ZONE") || logical.startsWith("TIMESTAMPTZ");
    int fraction = logical.endsWith("_S") ? 0 : logical.endsWith("_MS") ? 3 : logical.endsWith("_NS") ? 9 : 6;
    int time = 8 + (fraction == 0 ? 0 : fraction + 1) + (zoned ? 6 : 0);
    if (logical.startsWith("TIMESTAMP")) {
      return new Shape(XdbcDataType.XDBC_TIMESTAMP, 11 + time, true, false, null, null, null, null,
          zoned ? XdbcDatetimeSubcode.XDBC_SUBCODE_TIMESTAMP_WITH_TIMEZONE
              : XdbcDatetimeSubcode.XDBC_SUBCODE_TIMESTAMP);
    }
    return new Shape(XdbcDataType.XDBC_TIME, time, true, false, null, null, null, null,
        zoned ? XdbcDatetimeSubcode.XDBC_SUBCODE_TIME_WITH_TIMEZONE : XdbcDatetimeSubcode.XDBC_SUBCODE_TIME);
  }
}
