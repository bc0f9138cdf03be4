package io.thallus.flightsql;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;

/** The Arrow type a client binds a DuckDB placeholder type with (parameter schemas of prepared statements). */
final class ArrowTypes {
  private static final Pattern DECIMAL = Pattern.compile("DECIMAL\\((\\d+),\\s*(\\d+)\\)");

  private ArrowTypes() {}

  /** Types DuckDB could not infer before a value is bound ("INVALID", "UNKNOWN") are bound as text. */
  static ArrowType ofDuckDB(String name) {
    String type = name == null ? "" : name.strip().toUpperCase(Locale.ROOT);
    Matcher decimal = DECIMAL.matcher(type);
    if (decimal.matches()) {
      return new ArrowType.Decimal(Integer.parseInt(decimal.group(1)), Integer.parseInt(decimal.group(2)), 128);
    }
    return switch (type) {
      case "BOOLEAN" -> ArrowType.Bool.INSTANCE;
      case "TINYINT" -> new ArrowType.Int(8, true);
      case "SMALLINT" -> new ArrowType.Int(16, true);
      case "INTEGER" -> new ArrowType.Int(32, true);
      case "BIGINT" -> new ArrowType.Int(64, true);
      case "UTINYINT" -> new ArrowType.Int(8, false);
      case "USMALLINT" -> new ArrowType.Int(16, false);
      case "UINTEGER" -> new ArrowType.Int(32, false);
      case "UBIGINT" -> new ArrowType.Int(64, false);
      case "FLOAT" -> new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE);
      case "DOUBLE" -> new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);
      case "DATE" -> new ArrowType.Date(DateUnit.DAY);
      case "TIME" -> new ArrowType.Time(TimeUnit.MICROSECOND, 64);
      case "TIMESTAMP" -> new ArrowType.Timestamp(TimeUnit.MICROSECOND, null);
      case "TIMESTAMP WITH TIME ZONE" -> new ArrowType.Timestamp(TimeUnit.MICROSECOND, "UTC");
      case "BLOB" -> ArrowType.Binary.INSTANCE;
      default -> ArrowType.Utf8.INSTANCE;
    };
  }
}
