package io.thallus.duckdb;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalTime;
import java.time.ZoneOffset;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.TimeMicroVector;
import org.apache.arrow.vector.TimeMilliVector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.TimeStampMilliTZVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;

/** One value of a row of parameters, as DuckDB's driver binds it (the types a request's single values have). */
final class ParameterValues {
  private ParameterValues() {}

  static Object at(FieldVector column, int row) {
    if (column.isNull(row)) {
      return null;
    }
    return switch (column) {
      case VarCharVector text -> new String(text.get(row), StandardCharsets.UTF_8);
      case VarBinaryVector bytes -> bytes.get(row);
      case DateDayVector days -> LocalDate.ofEpochDay(days.get(row));
      // The Flight SQL door announces TIME placeholders in milliseconds (its ParameterTypes).
      case TimeMilliVector millis -> LocalTime.ofNanoOfDay(millis.get(row) * 1_000_000L);
      case TimeMicroVector micros -> LocalTime.ofNanoOfDay(micros.get(row) * 1_000L);
      case TimeStampMicroTZVector instants -> {
        long micros = instants.get(row);
        yield Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1_000L)
            .atOffset(ZoneOffset.UTC);
      }
      // And a TIMESTAMP WITH TIME ZONE one in milliseconds too.
      case TimeStampMilliTZVector instants -> Instant.ofEpochMilli(instants.get(row)).atOffset(ZoneOffset.UTC);
      // Numbers, booleans, decimals and timestamps without a zone: Arrow's own Java values.
      default -> column.getObject(row);
    };
  }
}
