package io.thallus.jdbc;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.NullVector;
import org.apache.arrow.vector.TimeMicroVector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.TimeStampMicroVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The rows of a batched prepared statement as one Arrow batch, one column per {@code ?}: what the server binds in
 * one request. A column takes the Arrow type of its values (integers as BIGINT, floating point as DOUBLE, decimals
 * at their largest scale, dates, times and timestamps at DuckDB's microseconds); a column whose values are of
 * different kinds goes as text, which DuckDB casts to the column's type as it would a string literal.
 */
final class ParameterBatch {
  private enum Kind { NULL, BOOLEAN, INTEGER, FLOATING, DECIMAL, TEXT, BYTES, DATE, TIME, TIMESTAMP, TIMESTAMP_TZ }

  private ParameterBatch() {}

  /** Java values as the batch holds them: JDBC's date and time classes as java.time, in one form per kind. */
  static Object normalize(Object value) {
    if (value instanceof String || value instanceof Long || value instanceof Integer || value instanceof Double) {
      // The common kinds, before the switch below tries every class.
      return value;
    }
    return switch (value) {
      case null -> null;
      case java.sql.Timestamp v -> v.toLocalDateTime();
      case java.sql.Date v -> v.toLocalDate();
      case java.sql.Time v -> v.toLocalTime();
      case Instant v -> v.atOffset(ZoneOffset.UTC);
      case ZonedDateTime v -> v.toOffsetDateTime();
      case Character v -> v.toString();
      case UUID v -> v.toString();
      case BigInteger v -> v.toString();
      default -> value;
    };
  }

  /**
   * Refuses a value no parameter can have, as the request would (cheaply: no request is built). A list is checked
   * element by element; it binds only in a statement run on its own, since a batch's columns carry no lists (see
   * {@link #kindOf}).
   */
  static void check(Object value) {
    if (value instanceof String || value instanceof Long || value instanceof Integer || value instanceof Double) {
      return;
    }
    if (value instanceof io.thallus.ListParameter list) {
      for (Object element : list.elements()) {
        if (element != null) {
          check(element);
        }
      }
      return;
    }
    kindOf(normalize(value));
  }

  private static Kind kindOf(Object value) {
    return switch (value) {
      case null -> Kind.NULL;
      case Boolean v -> Kind.BOOLEAN;
      case Byte v -> Kind.INTEGER;
      case Short v -> Kind.INTEGER;
      case Integer v -> Kind.INTEGER;
      case Long v -> Kind.INTEGER;
      case Float v -> Kind.FLOATING;
      case Double v -> Kind.FLOATING;
      case BigDecimal v -> Kind.DECIMAL;
      case String v -> Kind.TEXT;
      case byte[] v -> Kind.BYTES;
      case LocalDate v -> Kind.DATE;
      case LocalTime v -> Kind.TIME;
      case LocalDateTime v -> Kind.TIMESTAMP;
      case OffsetDateTime v -> Kind.TIMESTAMP_TZ;
      case io.thallus.ListParameter v -> throw new IllegalArgumentException("a batch cannot bind a list parameter "
          + "(java.sql.Array): run the statement once per row with executeUpdate");
      default -> throw new IllegalArgumentException("a query parameter cannot be a " + value.getClass().getName()
          + "; use a number, String, byte[], boolean, UUID, or a java.time or java.sql date/time value");
    };
  }

  /** The rows (normalized values) as a root the caller closes. */
  static VectorSchemaRoot of(List<Object[]> rows, int columns, BufferAllocator allocator) {
    List<FieldVector> vectors = new ArrayList<>(columns);
    try {
      for (int column = 0; column < columns; column++) {
        vectors.add(column(rows, column, allocator));
      }
    } catch (RuntimeException e) {
      vectors.forEach(FieldVector::close);
      throw e;
    }
    VectorSchemaRoot root = new VectorSchemaRoot(vectors);
    root.setRowCount(rows.size());
    return root;
  }

  private static FieldVector column(List<Object[]> rows, int column, BufferAllocator allocator) {
    Kind kind = Kind.NULL;
    int scale = 0;
    Class<?> lastClass = null;
    Kind lastKind = Kind.NULL;
    for (Object[] row : rows) {
      Object value = row[column];
      Kind next;
      if (value == null) {
        next = Kind.NULL;
      } else if (value.getClass() == lastClass) {
        // A column's values are mostly of one class: its kind is known.
        next = lastKind;
      } else {
        next = kindOf(value);
        lastClass = value.getClass();
        lastKind = next;
      }
      if (next == Kind.NULL || next == kind) {
        if (next == Kind.DECIMAL) {
          scale = Math.max(scale, ((BigDecimal) row[column]).scale());
        }
        continue;
      }
      kind = kind == Kind.NULL ? next : Kind.TEXT;
      if (next == Kind.DECIMAL) {
        scale = Math.max(scale, ((BigDecimal) row[column]).scale());
      }
    }
    if (kind == Kind.DECIMAL && !fitsDecimal(rows, column, scale)) {
      kind = Kind.TEXT;
    }
    String name = "p" + (column + 1);
    int count = rows.size();
    FieldVector vector = switch (kind) {
      case NULL -> new NullVector(name, count);
      case BOOLEAN -> fill(new BitVector(name, allocator), rows, column,
          (v, i, value) -> ((BitVector) v).set(i, (Boolean) value ? 1 : 0));
      case INTEGER -> integers(new BigIntVector(name, allocator), rows, column);
      case FLOATING -> floats(new Float8Vector(name, allocator), rows, column);
      case DECIMAL -> {
        int decimalScale = scale;
        yield fill(new DecimalVector(name, allocator, 38, decimalScale), rows, column,
            (v, i, value) -> ((DecimalVector) v).set(i, ((BigDecimal) value).setScale(decimalScale)));
      }
      case TEXT -> texts(new VarCharVector(name, allocator), rows, column);
      case BYTES -> fill(new VarBinaryVector(name, allocator), rows, column,
          (v, i, value) -> ((VarBinaryVector) v).setSafe(i, (byte[]) value));
      case DATE -> fill(new DateDayVector(name, allocator), rows, column,
          (v, i, value) -> ((DateDayVector) v).set(i, (int) ((LocalDate) value).toEpochDay()));
      case TIME -> fill(new TimeMicroVector(name, allocator), rows, column,
          (v, i, value) -> ((TimeMicroVector) v).set(i, ((LocalTime) value).toNanoOfDay() / 1_000L));
      case TIMESTAMP -> fill(new TimeStampMicroVector(name, allocator), rows, column,
          (v, i, value) -> ((TimeStampMicroVector) v).set(i,
              micros(((LocalDateTime) value).toInstant(ZoneOffset.UTC))));
      case TIMESTAMP_TZ -> fill(new TimeStampMicroTZVector(name, allocator, "UTC"), rows, column,
          (v, i, value) -> ((TimeStampMicroTZVector) v).set(i, micros(((OffsetDateTime) value).toInstant())));
    };
    return vector;
  }

  /** Microseconds since the epoch, truncated toward the past (DuckDB's timestamps are microseconds). */
  private static long micros(Instant instant) {
    return Math.addExact(Math.multiplyExact(instant.getEpochSecond(), 1_000_000L), instant.getNano() / 1_000L);
  }

  // The three commonest kinds fill in loops of their own: one call site per kind, which the JIT compiles tight.

  private static FieldVector integers(BigIntVector vector, List<Object[]> rows, int column) {
    try {
      vector.allocateNew(rows.size());
      for (int i = 0; i < rows.size(); i++) {
        if (rows.get(i)[column] instanceof Number value) {
          vector.set(i, value.longValue());
        } else {
          vector.setNull(i);
        }
      }
      vector.setValueCount(rows.size());
      return vector;
    } catch (RuntimeException e) {
      vector.close();
      throw e;
    }
  }

  private static FieldVector floats(Float8Vector vector, List<Object[]> rows, int column) {
    try {
      vector.allocateNew(rows.size());
      for (int i = 0; i < rows.size(); i++) {
        if (rows.get(i)[column] instanceof Number value) {
          vector.set(i, value.doubleValue());
        } else {
          vector.setNull(i);
        }
      }
      vector.setValueCount(rows.size());
      return vector;
    } catch (RuntimeException e) {
      vector.close();
      throw e;
    }
  }

  private static FieldVector texts(VarCharVector vector, List<Object[]> rows, int column) {
    try {
      byte[][] encoded = new byte[rows.size()][];
      long bytes = 0;
      for (int i = 0; i < rows.size(); i++) {
        Object value = rows.get(i)[column];
        if (value != null) {
          encoded[i] = (value instanceof String text ? text : text(value)).getBytes(StandardCharsets.UTF_8);
          bytes += encoded[i].length;
        }
      }
      vector.allocateNew(Math.max(1, bytes), rows.size());
      for (int i = 0; i < rows.size(); i++) {
        if (encoded[i] == null) {
          vector.setNull(i);
        } else {
          vector.setSafe(i, encoded[i]);
        }
      }
      vector.setValueCount(rows.size());
      return vector;
    } catch (RuntimeException e) {
      vector.close();
      throw e;
    }
  }

  private static boolean fitsDecimal(List<Object[]> rows, int column, int scale) {
    for (Object[] row : rows) {
      if (row[column] instanceof BigDecimal value && value.setScale(scale).precision() > 38) {
        return false;
      }
    }
    return true;
  }

  /** A value of a column of mixed kinds as text DuckDB casts: ISO dates and times, plain decimals. */
  private static String text(Object value) {
    return switch (value) {
      case BigDecimal v -> v.toPlainString();
      case byte[] v -> throw new IllegalArgumentException("a column mixes bytes with other values");
      default -> value.toString();
    };
  }

  private interface Setter {
    void set(FieldVector vector, int index, Object value);
  }

  private static FieldVector fill(FieldVector vector, List<Object[]> rows, int column, Setter setter) {
    try {
      vector.setInitialCapacity(rows.size());
      vector.allocateNew();
      for (int i = 0; i < rows.size(); i++) {
        Object value = rows.get(i)[column];
        if (value == null) {
          vector.setNull(i);
        } else {
          setter.set(vector, i, value);
        }
      }
      vector.setValueCount(rows.size());
      return vector;
    } catch (RuntimeException e) {
      vector.close();
      throw e;
    }
  }

  /**
   * The bytes a row takes in the batch's buffers at most (values, offsets, validity; padding comes per buffer): for
   * cutting a large batch into requests under the server's frame limit. Text counts its UTF-8 length exactly; a
   * null counts as the widest fixed-width value (a decimal), since its column keeps a slot for it.
   */
  static long rowBytes(Object[] row) {
    // A validity bit per column.
    long bytes = (row.length + 7) / 8;
    for (Object value : row) {
      bytes += switch (value) {
        case String v -> io.netty.buffer.ByteBufUtil.utf8Bytes(v) + 4L;
        case byte[] v -> v.length + 4L;
        case BigDecimal v -> 16;
        case null -> 16;
        default -> 8;
      };
    }
    return bytes;
  }
}
