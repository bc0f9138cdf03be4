package io.thallus.duckdb;

import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.IntervalUnit;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;

/**
 * DuckDB's type names, as its catalog and its prepared statements write them, read in one place: a DECIMAL's
 * precision and scale, and the Arrow type DuckDB's Arrow export gives a value of the type.
 */
final class DuckDBTypes {
  private static final Pattern DECIMAL = Pattern.compile("DECIMAL\\((\\d+),\\s*(\\d+)\\)");

  private DuckDBTypes() {}

  /** A DECIMAL type's precision and scale. */
  record Decimal(int precision, int scale) {}

  /** The precision and scale of {@code DECIMAL(p,s)}; empty for any other type. */
  static Optional<Decimal> decimal(String typeName) {
    Matcher decimal = DECIMAL.matcher(typeName.strip().toUpperCase(Locale.ROOT));
    return decimal.matches()
        ? Optional.of(new Decimal(Integer.parseInt(decimal.group(1)), Integer.parseInt(decimal.group(2))))
        : Optional.empty();
  }

  /**
   * The Arrow type of a value of DuckDB type {@code typeName} as DuckDB's Arrow export has it. A type DuckDB cannot
   * tell before a value is bound ("INVALID", "UNKNOWN", "NULL") is {@link ArrowType.Null}; a nested or extension type
   * (LIST, STRUCT, MAP, ENUM, ...) is text, which DuckDB casts from. A TIMESTAMP WITH TIME ZONE is in UTC here (the
   * export names the session's zone; an instant does not depend on it).
   */
  static ArrowType arrowType(String typeName) {
    String type = typeName == null ? "" : typeName.strip().toUpperCase(Locale.ROOT);
    Optional<Decimal> decimal = decimal(type);
    if (decimal.isPresent()) {
      return new ArrowType.Decimal(decimal.get().precision(), decimal.get().scale(), 128);
    }
    return switch (type) {
      case "", "INVALID", "UNKNOWN", "NULL", "ANY" -> ArrowType.Null.INSTANCE;
      case "BOOLEAN" -> ArrowType.Bool.INSTANCE;
      case "TINYINT" -> new ArrowType.Int(8, true);
      case "SMALLINT" -> new ArrowType.Int(16, true);
      case "INTEGER" -> new ArrowType.Int(32, true);
      case "BIGINT" -> new ArrowType.Int(64, true);
      case "UTINYINT" -> new ArrowType.Int(8, false);
      case "USMALLINT" -> new ArrowType.Int(16, false);
      case "UINTEGER" -> new ArrowType.Int(32, false);
      case "UBIGINT" -> new ArrowType.Int(64, false);
      case "HUGEINT", "UHUGEINT" -> new ArrowType.Decimal(38, 0, 128);
      case "FLOAT" -> new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE);
      case "DOUBLE" -> new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);
      case "DATE" -> new ArrowType.Date(DateUnit.DAY);
      case "TIME" -> new ArrowType.Time(TimeUnit.MICROSECOND, 64);
      case "TIMESTAMP" -> new ArrowType.Timestamp(TimeUnit.MICROSECOND, null);
      case "TIMESTAMP_S" -> new ArrowType.Timestamp(TimeUnit.SECOND, null);
      case "TIMESTAMP_MS" -> new ArrowType.Timestamp(TimeUnit.MILLISECOND, null);
      case "TIMESTAMP_NS" -> new ArrowType.Timestamp(TimeUnit.NANOSECOND, null);
      case "TIMESTAMP WITH TIME ZONE" -> new ArrowType.Timestamp(TimeUnit.MICROSECOND, "UTC");
      case "INTERVAL" -> new ArrowType.Interval(IntervalUnit.MONTH_DAY_NANO);
      case "BLOB" -> ArrowType.Binary.INSTANCE;
      default -> ArrowType.Utf8.INSTANCE;
    };
  }
}
