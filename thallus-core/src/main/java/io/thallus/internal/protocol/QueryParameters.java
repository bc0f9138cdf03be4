package io.thallus.internal.protocol;

import io.thallus.ListParameter;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;

/** The values a query's {@code ?} placeholders may take, in the forms OPEN carries them. */
public final class QueryParameters {
  /** SQL NULL on the wire and in {@link Message.Open}, whose lists cannot hold {@code null}. */
  public static final Null NULL = new Null();

  /** The type of {@link #NULL}. */
  public static final class Null {
    private Null() {}

    @Override
    public String toString() {
      return "NULL";
    }
  }

  private QueryParameters() {}

  /**
   * The wire form of a caller's value: Java's time and JDBC's date types become {@code java.time} values,
   * {@code null} becomes {@link #NULL}. Anything else is an {@link IllegalArgumentException} naming the type.
   */
  public static Object normalize(Object value) {
    return switch (value) {
      case null -> NULL;
      case Null v -> v;
      case Boolean v -> v;
      case Byte v -> v;
      case Short v -> v;
      case Integer v -> v;
      case Long v -> v;
      case Float v -> v;
      case Double v -> v;
      case BigDecimal v -> v;
      case BigInteger v -> v;
      case String v -> v;
      case Character v -> v.toString();
      case byte[] v -> v.clone();
      case LocalDate v -> v;
      case LocalTime v -> v;
      case LocalDateTime v -> v;
      case OffsetDateTime v -> v;
      case ZonedDateTime v -> v.toOffsetDateTime();
      case Instant v -> v.atOffset(ZoneOffset.UTC);
      case UUID v -> v;
      case java.sql.Timestamp v -> v.toLocalDateTime();
      case java.sql.Date v -> v.toLocalDate();
      case java.sql.Time v -> v.toLocalTime();
      case java.sql.Array v -> list(ListParameter.of(v));
      default -> throw new IllegalArgumentException("a query parameter cannot be a " + value.getClass().getName()
          + "; use a number, String, byte[], boolean, UUID, a java.time or java.sql date/time value, or a "
          + "java.sql.Array of them");
    };
  }

  /** The elements in their wire form, SQL NULL as {@code null} (a list holds nulls). */
  private static ListParameter list(ListParameter list) {
    List<Object> normalized = new ArrayList<>(list.elements().size());
    for (Object element : list.elements()) {
      Object value = normalize(element);
      normalized.add(value == NULL ? null : value);
    }
    return new ListParameter(list.elementType(), normalized);
  }

  public static List<Object> normalizeAll(List<?> values) {
    List<Object> normalized = new ArrayList<>(values.size());
    for (Object value : values) {
      normalized.add(normalize(value));
    }
    return List.copyOf(normalized);
  }

  /** The values as the engine binds them: {@link #NULL} back to {@code null}. */
  public static List<Object> forEngine(List<Object> wire) {
    List<Object> values = new ArrayList<>(wire.size());
    for (Object value : wire) {
      values.add(value == NULL ? null : value);
    }
    return Collections.unmodifiableList(values);
  }
}
