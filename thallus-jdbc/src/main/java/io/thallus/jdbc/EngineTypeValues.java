package io.thallus.jdbc;

import io.thallus.QueryRequest;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.UUID;
import java.util.function.Function;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * Values of the columns whose DuckDB type the server named ({@link QueryRequest#ENGINE_TYPE_KEY}) because their Arrow
 * type does not tell it, as DuckDB's own driver gives them: HUGEINT and UHUGEINT as BigInteger (the unsigned one's
 * top bit is no sign), UUID as UUID, BIT as its text of 0s and 1s, BIGNUM (VARINT) as its decimal text.
 */
final class EngineTypeValues {
  private static final BigInteger TWO_TO_128 = BigInteger.ONE.shiftLeft(128);

  private EngineTypeValues() {}

  /** The DuckDB type the server named for this column, or null. */
  static String engineType(Field field) {
    return field.getMetadata() == null ? null : field.getMetadata().get(QueryRequest.ENGINE_TYPE_KEY);
  }

  /** {@code plain} (the column read by its Arrow type) with its values turned into DuckDB's driver's, where named. */
  static ColumnReader wrap(ColumnReader plain) {
    String type = engineType(plain.field);
    if (type == null) {
      return plain;
    }
    Function<Object, Object> convert = switch (type) {
      case "HUGEINT" -> value -> value instanceof BigDecimal v ? v.toBigInteger() : value;
      case "UHUGEINT" -> value -> value instanceof BigDecimal v ? unsigned(v.toBigInteger()) : value;
      case "UUID" -> value -> value instanceof String v ? UUID.fromString(v) : value;
      case "BIT" -> value -> value instanceof byte[] v ? bits(v) : value;
      case "BIGNUM", "VARINT" -> value -> value instanceof byte[] v ? bignum(v) : value;
      case "TIME WITH TIME ZONE" -> value -> value instanceof String v ? offsetTime(v) : value;
      default -> null;
    };
    if (convert == null) {
      return plain;
    }
    return new ColumnReader(plain.field) {
      @Override
      boolean isNull(int row) {
        return plain.isNull(row);
      }

      @Override
      Object value(int row) {
        Object value = plain.value(row);
        return value == null ? null : convert.apply(value);
      }
    };
  }

  /**
   * DuckDB's text of a TIME WITH TIME ZONE: {@code HH:MM:SS[.ffffff]} then the offset's sign and
   * {@code HH[:MM[:SS]]} ({@code 12:00:00+05:30}, {@code 23:59:59.123456-08}).
   */
  static java.time.OffsetTime offsetTime(String text) {
    int sign = Math.max(text.lastIndexOf('+'), text.lastIndexOf('-'));
    return java.time.OffsetTime.of(java.time.LocalTime.parse(text.substring(0, sign)),
        java.time.ZoneOffset.of(text.substring(sign)));
  }

  /** A UHUGEINT sent as a signed 128-bit decimal: values over 2^127 arrive negative. */
  private static BigInteger unsigned(BigInteger signed) {
    return signed.signum() < 0 ? signed.add(TWO_TO_128) : signed;
  }

  /** DuckDB's BIT bytes: the count of padding bits, then the bits, the padding first. */
  static String bits(byte[] bytes) {
    if (bytes.length == 0) {
      return "";
    }
    int padding = bytes[0] & 0xFF;
    StringBuilder out = new StringBuilder((bytes.length - 1) * 8);
    for (int i = 1; i < bytes.length; i++) {
      for (int bit = 7; bit >= 0; bit--) {
        out.append((bytes[i] >> bit & 1) == 1 ? '1' : '0');
      }
    }
    return out.substring(Math.min(padding, out.length()));
  }

  /**
   * DuckDB's BIGNUM bytes: a 3-byte header whose top bit is set for a number at or above zero, then the magnitude,
   * big-endian; a negative number has every byte (header included) inverted.
   */
  static String bignum(byte[] bytes) {
    if (bytes.length < 4) {
      return new BigInteger(1, bytes).toString();
    }
    boolean negative = (bytes[0] & 0x80) == 0;
    byte[] magnitude = new byte[bytes.length - 3];
    for (int i = 3; i < bytes.length; i++) {
      magnitude[i - 3] = negative ? (byte) ~bytes[i] : bytes[i];
    }
    BigInteger value = new BigInteger(1, magnitude);
    return (negative ? value.negate() : value).toString();
  }
}
