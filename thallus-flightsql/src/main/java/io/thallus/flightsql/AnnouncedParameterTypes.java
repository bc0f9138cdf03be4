package io.thallus.flightsql;

import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;

/**
 * The Arrow type a prepared statement announces for a placeholder, where it differs from the engine's: a TIME or
 * TIMESTAMP in milliseconds. The Arrow Flight SQL JDBC driver (18.3; apache/arrow-java#838, open) writes
 * {@code setTime} and {@code setTimestamp} as milliseconds into whatever unit the announced type has, so with
 * DuckDB's microseconds 2024-01-02 03:04:01.123456 was stored as a moment of January 1970; and it keeps no more than
 * milliseconds anyway (Avatica hands it a {@code java.sql.Timestamp} as epoch milliseconds). The server reads each
 * bound column in the unit of the Arrow type the client sent, so clients that type their parameters themselves
 * (ADBC, pyarrow) keep micro- and nanoseconds; only a client that fills the announced schema is held to milliseconds.
 */
final class AnnouncedParameterTypes {
  private AnnouncedParameterTypes() {}

  static ArrowType announced(ArrowType engine) {
    return switch (engine) {
      case ArrowType.Timestamp timestamp -> new ArrowType.Timestamp(TimeUnit.MILLISECOND, timestamp.getTimezone());
      case ArrowType.Time _ -> new ArrowType.Time(TimeUnit.MILLISECOND, 32);
      default -> engine;
    };
  }
}
