package io.thallus.jdbc;

import java.sql.Types;
import java.util.stream.Collectors;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * How an Arrow column is described to JDBC: its {@link Types} code, DuckDB's name for it, the class
 * {@code getObject} returns (DuckDB's own driver's), and its precision and scale. The names are DuckDB's, so tools
 * show what the SQL said.
 */
record JdbcTypes(int sqlType, String typeName, String className, int precision, int scale, int displaySize,
    boolean signed) {

  static JdbcTypes of(Field field) {
    String engineType = EngineTypeValues.engineType(field);
    if (engineType != null) {
      JdbcTypes named = engine(engineType, field.getType() instanceof ArrowType.Utf8);
      if (named != null) {
        return named;
      }
    }
    ArrowType type = field.getType();
    return switch (type) {
      case ArrowType.Bool ignored -> of(Types.BOOLEAN, "BOOLEAN", Boolean.class, 1, 0, 5, false);
      case ArrowType.Int t when t.getIsSigned() -> switch (t.getBitWidth()) {
        case 8 -> of(Types.TINYINT, "TINYINT", Byte.class, 3, 0, 4, true);
        case 16 -> of(Types.SMALLINT, "SMALLINT", Short.class, 5, 0, 6, true);
        case 32 -> of(Types.INTEGER, "INTEGER", Integer.class, 10, 0, 11, true);
        default -> of(Types.BIGINT, "BIGINT", Long.class, 19, 0, 20, true);
      };
      case ArrowType.Int t -> switch (t.getBitWidth()) {
        case 8 -> of(Types.SMALLINT, "UTINYINT", Short.class, 3, 0, 3, false);
        case 16 -> of(Types.INTEGER, "USMALLINT", Integer.class, 5, 0, 5, false);
        case 32 -> of(Types.BIGINT, "UINTEGER", Long.class, 10, 0, 10, false);
        default -> of(Types.NUMERIC, "UBIGINT", java.math.BigInteger.class, 20, 0, 20, false);
      };
      case ArrowType.FloatingPoint t when t.getPrecision() == FloatingPointPrecision.DOUBLE ->
          of(Types.DOUBLE, "DOUBLE", Double.class, 17, 0, 24, true);
      case ArrowType.FloatingPoint t when t.getPrecision() == FloatingPointPrecision.SINGLE ->
          of(Types.REAL, "FLOAT", Float.class, 8, 0, 15, true);
      case ArrowType.FloatingPoint ignored -> of(Types.REAL, "HALFFLOAT", Float.class, 4, 0, 10, true);
      case ArrowType.Decimal t -> of(Types.DECIMAL, "DECIMAL(" + t.getPrecision() + "," + t.getScale() + ")",
          java.math.BigDecimal.class, t.getPrecision(), t.getScale(), t.getPrecision() + 2, true);
      case ArrowType.Utf8 ignored -> text();
      case ArrowType.LargeUtf8 ignored -> text();
      case ArrowType.Utf8View ignored -> text();
      case ArrowType.Binary ignored -> binary();
      case ArrowType.LargeBinary ignored -> binary();
      case ArrowType.BinaryView ignored -> binary();
      case ArrowType.FixedSizeBinary t ->
          of(Types.BINARY, "BLOB", java.sql.Blob.class, t.getByteWidth(), 0, t.getByteWidth() * 4, false);
      case ArrowType.Date ignored -> of(Types.DATE, "DATE", java.time.LocalDate.class, 10, 0, 10, false);
      case ArrowType.Time t -> of(Types.TIME, "TIME", java.time.LocalTime.class, 15, digits(t.getUnit()), 15, false);
      case ArrowType.Timestamp t when t.getTimezone() != null ->
          of(Types.TIMESTAMP_WITH_TIMEZONE, "TIMESTAMP WITH TIME ZONE", java.time.OffsetDateTime.class, 35,
              digits(t.getUnit()), 35, false);
      case ArrowType.Timestamp t -> of(Types.TIMESTAMP, switch (t.getUnit()) {
        case SECOND -> "TIMESTAMP_S";
        case MILLISECOND -> "TIMESTAMP_MS";
        case MICROSECOND -> "TIMESTAMP";
        case NANOSECOND -> "TIMESTAMP_NS";
      }, java.sql.Timestamp.class, 29, digits(t.getUnit()), 29, false);
      case ArrowType.Interval ignored -> of(Types.VARCHAR, "INTERVAL", String.class, 0, 0, 40, false);
      case ArrowType.Duration ignored -> of(Types.OTHER, "INTERVAL", java.time.Duration.class, 0, 0, 40, false);
      case ArrowType.Null ignored -> of(Types.NULL, "NULL", Object.class, 0, 0, 4, false);
      case ArrowType.Map ignored -> of(Types.OTHER, name(field), java.util.Map.class, 0, 0, Integer.MAX_VALUE, false);
      case ArrowType.List ignored -> array(field);
      case ArrowType.LargeList ignored -> array(field);
      case ArrowType.ListView ignored -> array(field);
      case ArrowType.LargeListView ignored -> array(field);
      case ArrowType.FixedSizeList ignored -> array(field);
      case ArrowType.Struct ignored -> of(Types.STRUCT, name(field), java.sql.Struct.class, 0, 0, Integer.MAX_VALUE,
          false);
      default -> of(Types.OTHER, type.toString(), Object.class, 0, 0, Integer.MAX_VALUE, false);
    };
  }

  /** A column whose DuckDB type the server named (see {@link EngineTypeValues}), as DuckDB's own driver has it. */
  private static JdbcTypes engine(String type, boolean text) {
    return switch (type) {
      case "HUGEINT" -> of(Types.OTHER, "HUGEINT", java.math.BigInteger.class, 39, 0, 40, true);
      case "UHUGEINT" -> of(Types.OTHER, "UHUGEINT", java.math.BigInteger.class, 39, 0, 39, false);
      case "UUID" -> of(Types.OTHER, "UUID", java.util.UUID.class, 36, 0, 36, false);
      case "BIT" -> of(Types.BIT, "BIT", String.class, Integer.MAX_VALUE, 0, Integer.MAX_VALUE, false);
      case "BIGNUM", "VARINT" -> of(Types.OTHER, type, String.class, Integer.MAX_VALUE, 0, Integer.MAX_VALUE, true);
      // Sent as text to keep its offset (a time sent as a time has lost it, and reads as TIME).
      case "TIME WITH TIME ZONE" -> text ? of(Types.TIME_WITH_TIMEZONE, type, java.time.OffsetTime.class, 15, 6, 21,
          false) : null;
      default -> null;
    };
  }

  private static JdbcTypes of(int sqlType, String name, Class<?> type, int precision, int scale, int display,
      boolean signed) {
    return new JdbcTypes(sqlType, name, type.getName(), precision, scale, display, signed);
  }

  private static JdbcTypes text() {
    return of(Types.VARCHAR, "VARCHAR", String.class, Integer.MAX_VALUE, 0, Integer.MAX_VALUE, false);
  }

  private static JdbcTypes binary() {
    return of(Types.VARBINARY, "BLOB", java.sql.Blob.class, Integer.MAX_VALUE, 0, Integer.MAX_VALUE, false);
  }

  private static JdbcTypes array(Field field) {
    return of(Types.ARRAY, name(field), java.sql.Array.class, 0, 0, Integer.MAX_VALUE, false);
  }

  private static int digits(org.apache.arrow.vector.types.TimeUnit unit) {
    return switch (unit) {
      case SECOND -> 0;
      case MILLISECOND -> 3;
      case MICROSECOND -> 6;
      case NANOSECOND -> 9;
    };
  }

  /** DuckDB's spelling of a (nested) type: {@code INTEGER[]}, {@code INTEGER[3]}, {@code STRUCT(a BIGINT)}. */
  static String name(Field field) {
    ArrowType type = field.getType();
    return switch (type) {
      case ArrowType.Map ignored -> {
        Field entries = field.getChildren().get(0);
        yield "MAP(" + name(entries.getChildren().get(0)) + ", " + name(entries.getChildren().get(1)) + ")";
      }
      case ArrowType.FixedSizeList t -> name(field.getChildren().get(0)) + "[" + t.getListSize() + "]";
      case ArrowType.List ignored -> name(field.getChildren().get(0)) + "[]";
      case ArrowType.LargeList ignored -> name(field.getChildren().get(0)) + "[]";
      case ArrowType.ListView ignored -> name(field.getChildren().get(0)) + "[]";
      case ArrowType.LargeListView ignored -> name(field.getChildren().get(0)) + "[]";
      case ArrowType.Struct ignored -> field.getChildren().stream()
          .map(child -> quote(child.getName()) + " " + name(child))
          .collect(Collectors.joining(", ", "STRUCT(", ")"));
      default -> field.getDictionary() != null ? "ENUM" : of(field).typeName();
    };
  }

  private static String quote(String name) {
    return name.matches("[a-z_][a-z0-9_]*") ? name : "\"" + name.replace("\"", "\"\"") + "\"";
  }
}
