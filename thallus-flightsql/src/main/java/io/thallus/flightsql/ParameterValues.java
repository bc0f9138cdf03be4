package io.thallus.flightsql;

import io.thallus.ListParameter;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.vector.BaseIntVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DateMilliVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.TimeMicroVector;
import org.apache.arrow.vector.TimeMilliVector;
import org.apache.arrow.vector.TimeNanoVector;
import org.apache.arrow.vector.TimeSecVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.UInt1Vector;
import org.apache.arrow.vector.UInt2Vector;
import org.apache.arrow.vector.UInt4Vector;
import org.apache.arrow.vector.UInt8Vector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.LargeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.util.Text;

/**
 * One bound parameter of an Arrow row as the Java value a Thallus query request takes, of the Java type the engine
 * binds as the SQL type the Arrow type means: an int32 stays an Integer (INTEGER), an int64 a Long (BIGINT), a list a
 * {@link ListParameter} of its elements with their SQL type (see {@link ParameterTypes}). A parameter's type decides
 * the type of what DuckDB computes from it ({@code SELECT ? + 1}), so it must reach the engine as the client sent it.
 * Unsigned integers, which no Java value binds as, go as the next wider signed type, their values unchanged.
 */
final class ParameterValues {
  private ParameterValues() {}

  static Object of(FieldVector vector, int row) {
    if (vector.isNull(row)) {
      return null;
    }
    return switch (vector) {
      case DateDayVector days -> LocalDate.ofEpochDay(days.get(row));
      case DateMilliVector millis -> Instant.ofEpochMilli(millis.get(row)).atOffset(ZoneOffset.UTC).toLocalDate();
      case TimeSecVector seconds -> LocalTime.ofSecondOfDay(seconds.get(row));
      case TimeMilliVector millis -> LocalTime.ofNanoOfDay(TimeUnit.MILLISECONDS.toNanos(millis.get(row)));
      case TimeMicroVector micros -> LocalTime.ofNanoOfDay(TimeUnit.MICROSECONDS.toNanos(micros.get(row)));
      case TimeNanoVector nanos -> LocalTime.ofNanoOfDay(nanos.get(row));
      case TimeStampVector stamps -> timestamp(stamps, row);
      case UInt1Vector small -> small.getObjectNoOverflow(row);
      case UInt2Vector small -> (int) small.get(row);
      case UInt4Vector medium -> medium.getObjectNoOverflow(row);
      case UInt8Vector large -> large.getObjectNoOverflow(row);
      case org.apache.arrow.vector.complex.MapVector map -> throw refused(map);
      case ListVector list -> list(list, list.getDataVector(), list.getElementStartIndex(row),
          list.getElementEndIndex(row));
      case LargeListVector list -> list(list, list.getDataVector(), Math.toIntExact(list.getElementStartIndex(row)),
          Math.toIntExact(list.getElementEndIndex(row)));
      case FixedSizeListVector list -> list(list, list.getDataVector(), row * list.getListSize(),
          (row + 1) * list.getListSize());
      default -> scalar(vector, row);
    };
  }

  private static Object scalar(FieldVector vector, int row) {
    ArrowType type = vector.getField().getType();
    if (!(vector instanceof BaseIntVector) && !ParameterTypes.isScalar(type)) {
      throw refused(vector);
    }
    Object value = vector.getObject(row);
    return value instanceof Text text ? text.toString() : value;
  }

  private static ThallusException refused(FieldVector vector) {
    return ThallusException.of(StatusCode.INVALID_ARGUMENT, "a query parameter of Arrow type "
        + vector.getField().getType() + " cannot be bound here; send it as one of the types "
        + ParameterTypes.SUPPORTED);
  }

  /** The elements {@code [start, end)} of a list's child vector, with the SQL type of the child. */
  private static ListParameter list(FieldVector list, FieldVector elements, int start, int end) {
    String sqlType = ParameterTypes.sqlType(list.getField().getChildren().get(0));
    List<Object> values = new ArrayList<>(end - start);
    for (int i = start; i < end; i++) {
      Object element = of(elements, i);
      // DuckDB's driver binds a BigInteger only at the top (as HUGEINT); in a list it takes the same as a DECIMAL.
      values.add(element instanceof java.math.BigInteger big ? new java.math.BigDecimal(big) : element);
    }
    return new ListParameter(sqlType, values);
  }

  private static Object timestamp(TimeStampVector vector, int row) {
    ArrowType.Timestamp type = (ArrowType.Timestamp) vector.getField().getType();
    long value = vector.get(row);
    long nanos = switch (type.getUnit()) {
      case SECOND -> TimeUnit.SECONDS.toNanos(value);
      case MILLISECOND -> TimeUnit.MILLISECONDS.toNanos(value);
      case MICROSECOND -> TimeUnit.MICROSECONDS.toNanos(value);
      case NANOSECOND -> value;
    };
    Instant instant = Instant.ofEpochSecond(Math.floorDiv(nanos, 1_000_000_000L), Math.floorMod(nanos, 1_000_000_000L));
    return type.getTimezone() == null ? LocalDateTime.ofInstant(instant, ZoneOffset.UTC)
        : instant.atOffset(ZoneOffset.UTC);
  }
}
