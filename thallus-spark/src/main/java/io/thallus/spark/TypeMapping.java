package io.thallus.spark;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * Which Arrow types DuckDB sends that Spark's {@code ArrowColumnVector} reads as they are, and, for the others, the
 * DuckDB type the server casts the column to so that it arrives readable. Spark 4.2 reads: boolean, signed
 * integers, float, double, decimal (128-bit, precision at most 38), utf8 and binary (also large), date (days),
 * timestamp in microseconds (with or without zone), interval month-day-nano, null, list, struct and map. Everything
 * else is cast in the generated SQL (see the README's type table):
 *
 * <ul>
 *   <li>unsigned integers widen to the next signed type (UBIGINT to DECIMAL(20,0)), so no value changes;
 *   <li>timestamps in s, ms, ns become microsecond TIMESTAMP/TIMESTAMPTZ (ns truncated to us);
 *   <li>DECIMAL(38,0) (DuckDB's HUGEINT and UHUGEINT arrive so) is cast explicitly, so a value with 39 digits fails
 *       on the server with DuckDB's message instead of in Spark;
 *   <li>TIME becomes VARCHAR (Spark 4.2's TIME type is off by default), ENUM (dictionary) VARCHAR, fixed-size ARRAY
 *       a LIST, and any other type (UUID as binary, BIGNUM, view types, ...) VARCHAR, DuckDB's own text form.
 * </ul>
 */
final class TypeMapping {
  private TypeMapping() {}

  /** One result column as Spark will see it: its name, the SQL that produces it, its Spark type. */
  record Column(String name, String selectSql, DataType sparkType) implements java.io.Serializable {}

  /** The columns of a result with this Arrow schema, each cast where Spark could not read it. */
  static List<Column> columns(List<Field> fields) {
    List<Column> columns = new ArrayList<>(fields.size());
    for (Field field : fields) {
      String reference = Sql.identifier(field.getName());
      String select = needsCast(field)
          ? "CAST(" + reference + " AS " + duckdbType(field) + ") AS " + reference
          : reference;
      columns.add(new Column(field.getName(), select, sparkType(field)));
    }
    return columns;
  }

  static StructType schema(List<Column> columns) {
    return new StructType(columns.stream()
        .map(c -> DataTypes.createStructField(c.name(), c.sparkType(), true))
        .toArray(StructField[]::new));
  }

  /** True when Spark cannot read the field (or one of its children) as DuckDB sends it. */
  static boolean needsCast(Field field) {
    if (field.getDictionary() != null) {
      return true;
    }
    ArrowType type = field.getType();
    return switch (type) {
      case ArrowType.Bool b -> false;
      case ArrowType.Int i -> !i.getIsSigned();
      case ArrowType.FloatingPoint f -> f.getPrecision() == FloatingPointPrecision.HALF;
      case ArrowType.Decimal d -> d.getBitWidth() != 128 || d.getPrecision() > 38
          || (d.getPrecision() == 38 && d.getScale() == 0);
      case ArrowType.Utf8 u -> false;
      case ArrowType.LargeUtf8 u -> false;
      case ArrowType.Binary b -> isExtension(field);
      case ArrowType.LargeBinary b -> isExtension(field);
      case ArrowType.Date d -> d.getUnit() != org.apache.arrow.vector.types.DateUnit.DAY;
      case ArrowType.Timestamp t -> t.getUnit() != TimeUnit.MICROSECOND;
      case ArrowType.Interval i -> i.getUnit() != org.apache.arrow.vector.types.IntervalUnit.MONTH_DAY_NANO;
      case ArrowType.Null n -> false;
      case ArrowType.List l -> field.getChildren().stream().anyMatch(TypeMapping::needsCast);
      case ArrowType.Struct s -> field.getChildren().stream().anyMatch(TypeMapping::needsCast);
      case ArrowType.Map m -> field.getChildren().get(0).getChildren().stream().anyMatch(TypeMapping::needsCast);
      default -> true;
    };
  }

  /** DuckDB writes its own types (BIGNUM, ...) as binary with an Arrow extension name: those are not bytes. */
  private static boolean isExtension(Field field) {
    return field.getMetadata().containsKey("ARROW:extension:name");
  }

  /** The DuckDB type a field is cast to so that it arrives as a type Spark reads. */
  static String duckdbType(Field field) {
    if (field.getDictionary() != null) {
      return "VARCHAR";
    }
    ArrowType type = field.getType();
    return switch (type) {
      case ArrowType.Bool b -> "BOOLEAN";
      case ArrowType.Int i -> switch (i.getBitWidth()) {
        case 8 -> i.getIsSigned() ? "TINYINT" : "SMALLINT";
        case 16 -> i.getIsSigned() ? "SMALLINT" : "INTEGER";
        case 32 -> i.getIsSigned() ? "INTEGER" : "BIGINT";
        default -> i.getIsSigned() ? "BIGINT" : "DECIMAL(20,0)";
      };
      case ArrowType.FloatingPoint f -> f.getPrecision() == FloatingPointPrecision.DOUBLE ? "DOUBLE" : "FLOAT";
      case ArrowType.Decimal d -> d.getPrecision() <= 38
          ? "DECIMAL(" + d.getPrecision() + "," + d.getScale() + ")" : "VARCHAR";
      case ArrowType.Utf8 u -> "VARCHAR";
      case ArrowType.LargeUtf8 u -> "VARCHAR";
      case ArrowType.Binary b -> isExtension(field) ? "VARCHAR" : "BLOB";
      case ArrowType.LargeBinary b -> isExtension(field) ? "VARCHAR" : "BLOB";
      case ArrowType.Date d -> "DATE";
      case ArrowType.Timestamp t -> t.getTimezone() == null ? "TIMESTAMP" : "TIMESTAMPTZ";
      case ArrowType.Interval i -> "INTERVAL";
      case ArrowType.List l -> duckdbType(field.getChildren().get(0)) + "[]";
      case ArrowType.LargeList l -> duckdbType(field.getChildren().get(0)) + "[]";
      case ArrowType.FixedSizeList l -> duckdbType(field.getChildren().get(0)) + "[]";
      case ArrowType.Struct s -> field.getChildren().stream()
          .map(c -> Sql.identifier(c.getName()) + " " + duckdbType(c))
          .collect(Collectors.joining(", ", "STRUCT(", ")"));
      case ArrowType.Map m -> {
        List<Field> entry = field.getChildren().get(0).getChildren();
        yield "MAP(" + duckdbType(entry.get(0)) + ", " + duckdbType(entry.get(1)) + ")";
      }
      default -> "VARCHAR";
    };
  }

  /** The Spark type of a field once {@link #duckdbType} (where needed) has been applied on the server. */
  static DataType sparkType(Field field) {
    if (field.getDictionary() != null) {
      return DataTypes.StringType;
    }
    ArrowType type = field.getType();
    return switch (type) {
      case ArrowType.Bool b -> DataTypes.BooleanType;
      case ArrowType.Int i -> switch (i.getBitWidth()) {
        case 8 -> i.getIsSigned() ? DataTypes.ByteType : DataTypes.ShortType;
        case 16 -> i.getIsSigned() ? DataTypes.ShortType : DataTypes.IntegerType;
        case 32 -> i.getIsSigned() ? DataTypes.IntegerType : DataTypes.LongType;
        default -> i.getIsSigned() ? DataTypes.LongType : DataTypes.createDecimalType(20, 0);
      };
      case ArrowType.FloatingPoint f -> f.getPrecision() == FloatingPointPrecision.DOUBLE
          ? DataTypes.DoubleType : DataTypes.FloatType;
      case ArrowType.Decimal d -> d.getPrecision() <= 38
          ? DataTypes.createDecimalType(d.getPrecision(), d.getScale()) : DataTypes.StringType;
      case ArrowType.Utf8 u -> DataTypes.StringType;
      case ArrowType.LargeUtf8 u -> DataTypes.StringType;
      case ArrowType.Binary b -> isExtension(field) ? DataTypes.StringType : DataTypes.BinaryType;
      case ArrowType.LargeBinary b -> isExtension(field) ? DataTypes.StringType : DataTypes.BinaryType;
      case ArrowType.Date d -> DataTypes.DateType;
      case ArrowType.Timestamp t -> t.getTimezone() == null ? DataTypes.TimestampNTZType : DataTypes.TimestampType;
      case ArrowType.Interval i -> DataTypes.CalendarIntervalType;
      case ArrowType.Null n -> DataTypes.NullType;
      case ArrowType.List l -> DataTypes.createArrayType(sparkType(field.getChildren().get(0)), true);
      case ArrowType.LargeList l -> DataTypes.createArrayType(sparkType(field.getChildren().get(0)), true);
      case ArrowType.FixedSizeList l -> DataTypes.createArrayType(sparkType(field.getChildren().get(0)), true);
      case ArrowType.Struct s -> new StructType(field.getChildren().stream()
          .map(c -> DataTypes.createStructField(c.getName(), sparkType(c), true))
          .toArray(StructField[]::new));
      case ArrowType.Map m -> {
        List<Field> entry = field.getChildren().get(0).getChildren();
        yield DataTypes.createMapType(sparkType(entry.get(0)), sparkType(entry.get(1)), true);
      }
      default -> DataTypes.StringType;
    };
  }
}
