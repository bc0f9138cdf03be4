package io.thallus.jdbc;

import io.thallus.jdbc.ColumnReader.Interval;
import io.thallus.jdbc.ColumnReader.StructValue;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.sql.Date;
import java.sql.SQLException;
import java.sql.Time;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Calendar;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;

/**
 * Conversions from a column's natural value (see {@link ColumnReader}) to what each JDBC getter returns, and the
 * text {@code getString} gives, in one place. A value that does not convert is an SQLDataException naming the value
 * and the target; a number that does not fit is SQLState 22003.
 */
final class Values {
  private Values() {}

  /**
   * What {@code getObject(int)} returns, the classes DuckDB's own driver returns: LocalDate, LocalTime, Timestamp,
   * OffsetDateTime, BigInteger for UBIGINT, HUGEINT and UHUGEINT, {@link java.sql.Blob} for bytes,
   * {@link java.sql.Array} for lists, {@link java.sql.Struct} for structs, text for intervals.
   */
  static Object toJdbc(Object value) {
    return switch (value) {
      case null -> null;
      case LocalDateTime v -> Timestamp.valueOf(v);
      case byte[] v -> blobOf(v);
      case Interval v -> format(v);
      case List<?> v -> new ThallusArray(v);
      case StructValue v -> new ThallusStruct(v);
      case Map<?, ?> v -> {
        Map<Object, Object> converted = new LinkedHashMap<>();
        v.forEach((key, item) -> converted.put(toJdbc(key), toJdbc(item)));
        yield converted;
      }
      default -> value;
    };
  }

  static String format(Object value) {
    return switch (value) {
      case null -> null;
      case String v -> v;
      case byte[] v -> blob(v);
      case LocalDateTime v -> Timestamp.valueOf(v).toString();
      case Interval v -> interval(v);
      case BigDecimal v -> v.toString();
      case List<?> v -> nested(v);
      case StructValue v -> nested(v);
      case Map<?, ?> v -> nested(v);
      default -> value.toString();
    };
  }

  /** Nested values as DuckDB prints them: {@code [1, NULL, 'a b']}, {@code {'x': 1}}, {@code {k=1}}. */
  private static String nested(Object value) {
    StringBuilder out = new StringBuilder();
    appendNested(out, value);
    return out.toString();
  }

  private static void appendNested(StringBuilder out, Object value) {
    switch (value) {
      case null -> out.append("NULL");
      case String v -> out.append(needsQuotes(v) ? "'" + v.replace("'", "''") + "'" : v);
      case List<?> v -> {
        out.append('[');
        for (int i = 0; i < v.size(); i++) {
          out.append(i == 0 ? "" : ", ");
          appendNested(out, v.get(i));
        }
        out.append(']');
      }
      case StructValue v -> {
        out.append('{');
        for (int i = 0; i < v.names().size(); i++) {
          out.append(i == 0 ? "" : ", ").append('\'').append(v.names().get(i).replace("'", "''")).append("': ");
          appendNested(out, v.values().get(i));
        }
        out.append('}');
      }
      case Map<?, ?> v -> {
        out.append('{');
        boolean first = true;
        for (Map.Entry<?, ?> entry : v.entrySet()) {
          out.append(first ? "" : ", ");
          first = false;
          appendNested(out, entry.getKey());
          out.append('=');
          appendNested(out, entry.getValue());
        }
        out.append('}');
      }
      default -> out.append(format(value));
    }
  }

  private static boolean needsQuotes(String text) {
    if (text.isEmpty() || text.equalsIgnoreCase("null") || !text.strip().equals(text)) {
      return true;
    }
    for (int i = 0; i < text.length(); i++) {
      if ("[]{}(),:'\"\\=".indexOf(text.charAt(i)) >= 0) {
        return true;
      }
    }
    return false;
  }

  private static java.sql.Blob blobOf(byte[] bytes) {
    try {
      return new javax.sql.rowset.serial.SerialBlob(bytes);
    } catch (SQLException e) {
      // SerialBlob refuses only a null array.
      throw new IllegalStateException(e);
    }
  }

  /** A BLOB as DuckDB prints it: printable ASCII as is, every other byte as {@code \xHH}. */
  static String blob(byte[] bytes) {
    StringBuilder out = new StringBuilder(bytes.length);
    for (byte b : bytes) {
      int c = b & 0xFF;
      if (c >= 0x20 && c < 0x7F && c != '\\' && c != '\'' && c != '"') {
        out.append((char) c);
      } else {
        out.append(String.format(Locale.ROOT, "\\x%02X", c));
      }
    }
    return out.toString();
  }

  /** An interval as DuckDB prints it: {@code 1 year 2 months 3 days 04:05:06.000007}. */
  static String interval(Interval interval) {
    StringBuilder out = new StringBuilder();
    int years = interval.months() / 12;
    int months = interval.months() % 12;
    unit(out, years, "year");
    unit(out, months, "month");
    unit(out, interval.days(), "day");
    long micros = interval.nanos() / 1_000;
    if (micros != 0 || out.isEmpty()) {
      out.append(out.isEmpty() ? "" : " ");
      if (micros < 0) {
        out.append('-');
        micros = -micros;
      }
      long hours = micros / 3_600_000_000L;
      long minutes = micros / 60_000_000L % 60;
      long seconds = micros / 1_000_000L % 60;
      long fraction = micros % 1_000_000L;
      out.append(String.format(Locale.ROOT, "%02d:%02d:%02d", hours, minutes, seconds));
      if (fraction != 0) {
        // DuckDB drops the fraction's trailing zeros: .01001, not .010010.
        out.append(String.format(Locale.ROOT, ".%06d", fraction).replaceAll("0+$", ""));
      }
    }
    return out.toString();
  }

  private static void unit(StringBuilder out, long count, String name) {
    if (count != 0) {
      // DuckDB's plural: "1 day" and "-1 day", "2 days" and "-2 days".
      out.append(out.isEmpty() ? "" : " ").append(count).append(' ').append(name)
          .append(count == 1 || count == -1 ? "" : "s");
    }
  }

  static boolean toBoolean(Object value) throws SQLException {
    return switch (value) {
      case null -> false;
      case Boolean v -> v;
      case BigDecimal v -> v.signum() != 0;
      case BigInteger v -> v.signum() != 0;
      case Number v -> v.doubleValue() != 0;
      case String v -> switch (v.trim().toLowerCase(Locale.ROOT)) {
        case "true", "t", "1", "yes", "y" -> true;
        case "false", "f", "0", "no", "n" -> false;
        default -> throw cannot(value, "boolean");
      };
      default -> throw cannot(value, "boolean");
    };
  }

  /** A whole number within {@code min..max}; a fraction is truncated, as JDBC drivers do. */
  static long toLong(Object value, long min, long max, String target) throws SQLException {
    long result;
    switch (value) {
      case null -> {
        return 0;
      }
      case Long v -> result = v;
      case Integer v -> result = v;
      case Short v -> result = v;
      case Byte v -> result = v;
      case Boolean v -> result = v ? 1 : 0;
      case Double v -> result = fromDouble(v, target);
      case Float v -> result = fromDouble(v, target);
      case BigInteger v -> result = exact(new BigDecimal(v), target);
      case BigDecimal v -> result = exact(v, target);
      case String v -> {
        try {
          result = exact(new BigDecimal(v.trim()), target);
        } catch (NumberFormatException e) {
          throw cannot(value, target);
        }
      }
      default -> throw cannot(value, target);
    }
    if (result < min || result > max) {
      throw Errors.outOfRange(value + " does not fit a " + target);
    }
    return result;
  }

  private static long fromDouble(double v, String target) throws SQLException {
    if (Double.isNaN(v) || v >= 0x1p63 || v < -0x1p63) {
      throw Errors.outOfRange(v + " does not fit a " + target);
    }
    return (long) v;
  }

  private static long exact(BigDecimal v, String target) throws SQLException {
    BigInteger whole = v.toBigInteger();
    if (whole.bitLength() > 63) {
      throw Errors.outOfRange(v + " does not fit a " + target);
    }
    return whole.longValue();
  }

  static double toDouble(Object value) throws SQLException {
    return switch (value) {
      case null -> 0;
      case Number v -> v.doubleValue();
      case Boolean v -> v ? 1 : 0;
      case String v -> {
        try {
          yield Double.parseDouble(v.trim());
        } catch (NumberFormatException e) {
          throw cannot(value, "double");
        }
      }
      default -> throw cannot(value, "double");
    };
  }

  static BigDecimal toBigDecimal(Object value) throws SQLException {
    return switch (value) {
      case null -> null;
      case BigDecimal v -> v;
      case BigInteger v -> new BigDecimal(v);
      case Long v -> BigDecimal.valueOf(v);
      case Integer v -> BigDecimal.valueOf(v);
      case Short v -> BigDecimal.valueOf(v);
      case Byte v -> BigDecimal.valueOf(v);
      case Boolean v -> v ? BigDecimal.ONE : BigDecimal.ZERO;
      case Double v when Double.isFinite(v) -> new BigDecimal(v.toString());
      case Float v when Float.isFinite(v) -> new BigDecimal(v.toString());
      case String v -> {
        try {
          yield new BigDecimal(v.trim());
        } catch (NumberFormatException e) {
          throw cannot(value, "BigDecimal");
        }
      }
      default -> throw cannot(value, "BigDecimal");
    };
  }

  static byte[] toBytes(Object value) throws SQLException {
    return switch (value) {
      case null -> null;
      case byte[] v -> v;
      case String v -> v.getBytes(StandardCharsets.UTF_8);
      default -> throw cannot(value, "byte[]");
    };
  }

  static LocalDate toLocalDate(Object value) throws SQLException {
    return switch (value) {
      case null -> null;
      case LocalDate v -> v;
      case LocalDateTime v -> v.toLocalDate();
      case OffsetDateTime v -> v.toLocalDate();
      case String v -> parse(v, LocalDate::parse, "date");
      default -> throw cannot(value, "date");
    };
  }

  static LocalTime toLocalTime(Object value) throws SQLException {
    return switch (value) {
      case null -> null;
      case LocalTime v -> v;
      case java.time.OffsetTime v -> v.toLocalTime();
      case LocalDateTime v -> v.toLocalTime();
      case OffsetDateTime v -> v.toLocalTime();
      case String v -> parse(v, LocalTime::parse, "time");
      default -> throw cannot(value, "time");
    };
  }

  static LocalDateTime toLocalDateTime(Object value) throws SQLException {
    return switch (value) {
      case null -> null;
      case LocalDateTime v -> v;
      case LocalDate v -> v.atStartOfDay();
      case OffsetDateTime v -> v.toLocalDateTime();
      case String v -> parse(v.trim().replace(' ', 'T'), LocalDateTime::parse, "timestamp");
      default -> throw cannot(value, "timestamp");
    };
  }

  static OffsetDateTime toOffsetDateTime(Object value, ZoneId zoneForLocal) throws SQLException {
    return switch (value) {
      case null -> null;
      case OffsetDateTime v -> v;
      case LocalDateTime v -> v.atZone(zoneForLocal).toOffsetDateTime();
      case LocalDate v -> v.atStartOfDay(zoneForLocal).toOffsetDateTime();
      case String v -> parse(v.trim().replace(' ', 'T'), OffsetDateTime::parse, "timestamp with time zone");
      default -> throw cannot(value, "timestamp with time zone");
    };
  }

  static Date toDate(Object value, Calendar calendar) throws SQLException {
    if (value instanceof OffsetDateTime v) {
      return new Date(v.toInstant().toEpochMilli());
    }
    LocalDate date = toLocalDate(value);
    if (date == null) {
      return null;
    }
    return calendar == null ? Date.valueOf(date)
        : new Date(date.atStartOfDay(calendar.getTimeZone().toZoneId()).toInstant().toEpochMilli());
  }

  static Time toTime(Object value, Calendar calendar) throws SQLException {
    if (value instanceof OffsetDateTime v) {
      return new Time(v.toInstant().toEpochMilli());
    }
    LocalTime time = toLocalTime(value);
    return time == null ? null : time(time, calendar);
  }

  /** Keeps the milliseconds, which {@link Time#valueOf(LocalTime)} drops. */
  private static Time time(LocalTime time, Calendar calendar) {
    ZoneId zone = calendar == null ? ZoneId.systemDefault() : calendar.getTimeZone().toZoneId();
    return new Time(time.atDate(LocalDate.EPOCH).atZone(zone).toInstant().toEpochMilli());
  }

  static Timestamp toTimestamp(Object value, Calendar calendar) throws SQLException {
    if (value instanceof OffsetDateTime v) {
      return Timestamp.from(v.toInstant());
    }
    LocalDateTime local = toLocalDateTime(value);
    if (local == null) {
      return null;
    }
    if (calendar == null) {
      return Timestamp.valueOf(local);
    }
    return Timestamp.from(local.atZone(calendar.getTimeZone().toZoneId()).toInstant());
  }

  /** {@code getObject(column, type)}: the JDBC 4.2 conversions plus java.time, UUID, List and Map. */
  @SuppressWarnings("unchecked")
  static <T> T convert(Object value, Class<T> type) throws SQLException {
    if (value == null) {
      return null;
    }
    Object result;
    if (type == String.class) {
      result = format(value);
    } else if (type == Object.class) {
      result = toJdbc(value);
    } else if (type == Boolean.class) {
      result = toBoolean(value);
    } else if (type == Byte.class) {
      result = (byte) toLong(value, Byte.MIN_VALUE, Byte.MAX_VALUE, "byte");
    } else if (type == Short.class) {
      result = (short) toLong(value, Short.MIN_VALUE, Short.MAX_VALUE, "short");
    } else if (type == Integer.class) {
      result = (int) toLong(value, Integer.MIN_VALUE, Integer.MAX_VALUE, "int");
    } else if (type == Long.class) {
      result = toLong(value, Long.MIN_VALUE, Long.MAX_VALUE, "long");
    } else if (type == Float.class) {
      result = (float) toDouble(value);
    } else if (type == Double.class) {
      result = toDouble(value);
    } else if (type == BigDecimal.class) {
      result = toBigDecimal(value);
    } else if (type == BigInteger.class) {
      result = value instanceof BigInteger v ? v : toBigDecimal(value).toBigInteger();
    } else if (type == byte[].class) {
      result = toBytes(value);
    } else if (type == LocalDate.class) {
      result = toLocalDate(value);
    } else if (type == LocalTime.class) {
      result = toLocalTime(value);
    } else if (type == LocalDateTime.class) {
      result = toLocalDateTime(value);
    } else if (type == OffsetDateTime.class) {
      result = toOffsetDateTime(value, ZoneId.systemDefault());
    } else if (type == ZonedDateTime.class) {
      result = toOffsetDateTime(value, ZoneId.systemDefault()).toZonedDateTime();
    } else if (type == Instant.class) {
      result = toOffsetDateTime(value, ZoneId.systemDefault()).toInstant();
    } else if (type == Date.class) {
      result = toDate(value, null);
    } else if (type == Time.class) {
      result = toTime(value, null);
    } else if (type == Timestamp.class) {
      result = toTimestamp(value, null);
    } else if (type == UUID.class) {
      result = value instanceof UUID v ? v : parse(format(value), UUID::fromString, "UUID");
    } else if (type == Duration.class && value instanceof Duration) {
      result = value;
    } else if (type == List.class && value instanceof List<?> list) {
      List<Object> converted = new ArrayList<>(list.size());
      for (Object item : list) {
        converted.add(toJdbc(item));
      }
      result = converted;
    } else if (type == Map.class && value instanceof StructValue struct) {
      Map<String, Object> converted = new LinkedHashMap<>();
      for (int i = 0; i < struct.names().size(); i++) {
        converted.put(struct.names().get(i), toJdbc(struct.values().get(i)));
      }
      result = converted;
    } else if (type.isInstance(toJdbc(value))) {
      result = toJdbc(value);
    } else {
      throw cannot(value, type.getName());
    }
    return (T) result;
  }

  private interface Parser<T> {
    T parse(String text);
  }

  private static <T> T parse(String text, Parser<T> parser, String target) throws SQLException {
    try {
      return parser.parse(text.trim());
    } catch (DateTimeParseException | IllegalArgumentException e) {
      throw cannot(text, target);
    }
  }

  static SQLException cannot(Object value, String target) {
    String shown = value instanceof String s && s.length() > 60 ? s.substring(0, 60) + "..." : format(value);
    return Errors.conversion("cannot read " + (value instanceof String ? "'" + shown + "'" : shown) + " ("
        + value.getClass().getSimpleName() + ") as " + target);
  }
}
