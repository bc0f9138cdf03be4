package io.thallus.flightsql;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * The SQL type (as DuckDB names it) a bound Arrow parameter means, as DuckDB's own Arrow scan reads the Arrow type:
 * the element type a list parameter carries (see {@link ParameterValues}). Unsigned integers are named by the wider
 * signed type their values are bound as.
 */
final class ParameterTypes {
  /** The Arrow types a parameter may have, for the error that refuses another. */
  static final String SUPPORTED = "null, bool, (u)int8-64, float32/64, decimal, utf8, binary, date, time, timestamp,"
      + " and lists of them";

  private ParameterTypes() {}

  /** Whether a value of {@code type} binds as its Arrow Java value, unchanged (lists and times aside). */
  static boolean isScalar(ArrowType type) {
    return switch (type.getTypeID()) {
      case Null, Bool, Int, Decimal, Utf8, LargeUtf8, Utf8View, Binary, LargeBinary, BinaryView, FixedSizeBinary,
          Date, Time, Timestamp -> true;
      case FloatingPoint -> ((ArrowType.FloatingPoint) type).getPrecision()
          != org.apache.arrow.vector.types.FloatingPointPrecision.HALF;
      default -> false;
    };
  }

  /** The SQL type of a list parameter's elements, of Arrow field {@code element}. */
  static String sqlType(Field element) {
    ArrowType type = element.getType();
    return switch (type) {
      case ArrowType.Null ignored -> "NULL";
      case ArrowType.Bool ignored -> "BOOLEAN";
      case ArrowType.Int integer -> integer(integer);
      case ArrowType.FloatingPoint floating when isScalar(floating) -> switch (floating.getPrecision()) {
        case SINGLE -> "FLOAT";
        default -> "DOUBLE";
      };
      case ArrowType.Decimal decimal -> "DECIMAL(" + decimal.getPrecision() + "," + decimal.getScale() + ")";
      case ArrowType.Utf8 ignored -> "VARCHAR";
      case ArrowType.LargeUtf8 ignored -> "VARCHAR";
      case ArrowType.Utf8View ignored -> "VARCHAR";
      case ArrowType.Binary ignored -> "BLOB";
      case ArrowType.LargeBinary ignored -> "BLOB";
      case ArrowType.BinaryView ignored -> "BLOB";
      case ArrowType.FixedSizeBinary ignored -> "BLOB";
      case ArrowType.Date ignored -> "DATE";
      case ArrowType.Time ignored -> "TIME";
      case ArrowType.Timestamp stamp -> stamp.getTimezone() == null ? "TIMESTAMP" : "TIMESTAMP WITH TIME ZONE";
      case ArrowType.List ignored -> sqlType(element.getChildren().get(0)) + "[]";
      case ArrowType.LargeList ignored -> sqlType(element.getChildren().get(0)) + "[]";
      case ArrowType.FixedSizeList ignored -> sqlType(element.getChildren().get(0)) + "[]";
      default -> throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "a query parameter cannot be a list of "
          + type + "; lists may hold " + SUPPORTED);
    };
  }

  private static String integer(ArrowType.Int type) {
    return switch (type.getBitWidth()) {
      case 8 -> type.getIsSigned() ? "TINYINT" : "SMALLINT";
      case 16 -> type.getIsSigned() ? "SMALLINT" : "INTEGER";
      case 32 -> type.getIsSigned() ? "INTEGER" : "BIGINT";
      default -> type.getIsSigned() ? "BIGINT" : "HUGEINT";
    };
  }
}
