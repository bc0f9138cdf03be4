package io.thallus.flightsql;

import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DateMilliVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.TimeMicroVector;
import org.apache.arrow.vector.TimeMilliVector;
import org.apache.arrow.vector.TimeNanoVector;
import org.apache.arrow.vector.TimeSecVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.util.Text;

/** One bound parameter of an Arrow row as the Java value a Thallus query request takes. */
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
      case TimeMilliVector millis -> LocalTime.ofNanoOfDay(millis.get(row) * 1_000_000L);
      case TimeMicroVector micros -> LocalTime.ofNanoOfDay(micros.get(row) * 1000);
      case TimeNanoVector nanos -> LocalTime.ofNanoOfDay(nanos.get(row));
      case TimeStampVector stamps -> timestamp(stamps, row);
      default -> {
        Object value = vector.getObject(row);
        yield value instanceof Text text ? text.toString() : value;
      }
    };
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
