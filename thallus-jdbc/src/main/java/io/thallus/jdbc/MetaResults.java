package io.thallus.jdbc;

import java.math.BigDecimal;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;

/** Result sets the driver builds itself, from rows in memory: an array's elements, fixed metadata. */
final class MetaResults {
  private MetaResults() {}

  /** A result with the given column names; each column's type is that of its first non-null value. */
  static ResultSet of(List<String> names, Object[][] rows) {
    List<Field> fields = new ArrayList<>();
    for (int column = 0; column < names.size(); column++) {
      Object sample = null;
      for (Object[] row : rows) {
        if (row[column] != null) {
          sample = row[column];
          break;
        }
      }
      fields.add(new Field(names.get(column), FieldType.nullable(arrowTypeOf(sample)), null));
    }
    return new ThallusResultSet(null, new ListRows(fields, rows));
  }

  static int sqlTypeOf(Object value) {
    return JdbcTypes.of(new Field("", FieldType.nullable(arrowTypeOf(value)), null)).sqlType();
  }

  static String typeNameOf(Object value) {
    return JdbcTypes.of(new Field("", FieldType.nullable(arrowTypeOf(value)), null)).typeName();
  }

  private static ArrowType arrowTypeOf(Object value) {
    return switch (value) {
      case null -> ArrowType.Utf8.INSTANCE;
      case Boolean ignored -> ArrowType.Bool.INSTANCE;
      case Byte ignored -> new ArrowType.Int(8, true);
      case Short ignored -> new ArrowType.Int(16, true);
      case Integer ignored -> new ArrowType.Int(32, true);
      case Long ignored -> new ArrowType.Int(64, true);
      case Float ignored -> new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE);
      case Double ignored -> new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);
      case BigDecimal v -> new ArrowType.Decimal(Math.max(v.precision(), v.scale()), Math.max(v.scale(), 0), 128);
      case byte[] ignored -> ArrowType.Binary.INSTANCE;
      case java.sql.Date ignored -> new ArrowType.Date(org.apache.arrow.vector.types.DateUnit.DAY);
      case java.sql.Timestamp ignored ->
          new ArrowType.Timestamp(org.apache.arrow.vector.types.TimeUnit.MICROSECOND, null);
      case java.time.LocalDate ignored -> new ArrowType.Date(org.apache.arrow.vector.types.DateUnit.DAY);
      // No element or field types to name: described as text, never as a nested type without children.
      case java.sql.Array ignored -> ArrowType.Utf8.INSTANCE;
      case java.sql.Struct ignored -> ArrowType.Utf8.INSTANCE;
      default -> ArrowType.Utf8.INSTANCE;
    };
  }

  /** Rows held in memory; values are already what {@code getObject} returns. */
  private static final class ListRows implements Rows {
    private final Object[][] rows;
    private final List<ColumnReader> readers;
    private int row = -1;

    ListRows(List<Field> fields, Object[][] rows) {
      this.rows = rows;
      List<ColumnReader> built = new ArrayList<>();
      for (int i = 0; i < fields.size(); i++) {
        int column = i;
        built.add(new ColumnReader(fields.get(i)) {
          @Override
          boolean isNull(int index) {
            return rows[index][column] == null;
          }

          @Override
          Object value(int index) {
            return rows[index][column];
          }
        });
      }
      this.readers = List.copyOf(built);
    }

    @Override
    public List<ColumnReader> readers() {
      return readers;
    }

    @Override
    public boolean next() {
      if (row + 1 >= rows.length) {
        row = rows.length;
        return false;
      }
      row++;
      return true;
    }

    @Override
    public int row() {
      return row;
    }

    @Override
    public void cancel() {}

    @Override
    public void close() {}
  }
}
