package io.thallus.jdbc;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.sql.SQLDataException;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.SQLInvalidAuthorizationSpecException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLSyntaxErrorException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransientConnectionException;

/** The driver's one mapping from Thallus status codes to SQLStates and {@link SQLException} subclasses. */
final class Errors {
  private Errors() {}

  /** SQLState for each status code (SQL:2016 classes; 08 connection, 22 data, 28 authorization, 42 syntax). */
  static String sqlState(StatusCode code) {
    return switch (code) {
      case OK -> "00000";
      case CANCELLED -> "57014";
      case INVALID_ARGUMENT -> "42000";
      case DEADLINE_EXCEEDED -> "HYT00";
      case NOT_FOUND -> "42S02";
      case ALREADY_EXISTS -> "42S01";
      case PERMISSION_DENIED -> "42501";
      case RESOURCE_EXHAUSTED -> "53000";
      case FAILED_PRECONDITION -> "55000";
      case OUT_OF_RANGE -> "54000";
      case ABORTED -> "40001";
      case UNIMPLEMENTED -> "0A000";
      case UNAVAILABLE -> "08006";
      case UNAUTHENTICATED -> "28000";
      case PROTOCOL_ERROR -> "08S01";
      case UNKNOWN, INTERNAL -> "XX000";
    };
  }

  static SQLException from(ThallusException e) {
    StatusCode code = e.code();
    String message = e.getMessage();
    String state = sqlState(code);
    int vendorCode = code.wireValue();
    SQLException translated = switch (code) {
      case INVALID_ARGUMENT, NOT_FOUND, ALREADY_EXISTS -> new SQLSyntaxErrorException(message, state, vendorCode, e);
      case DEADLINE_EXCEEDED -> new SQLTimeoutException(message, state, vendorCode, e);
      case UNAUTHENTICATED, PERMISSION_DENIED -> new SQLInvalidAuthorizationSpecException(message, state, vendorCode, e);
      case UNAVAILABLE -> new SQLTransientConnectionException(message, state, vendorCode, e);
      case PROTOCOL_ERROR -> new SQLNonTransientConnectionException(message, state, vendorCode, e);
      case UNIMPLEMENTED -> new SQLFeatureNotSupportedException(message, state, vendorCode, e);
      case ABORTED -> new java.sql.SQLTransactionRollbackException(message, state, vendorCode, e);
      default -> new SQLException(message, state, vendorCode, e);
    };
    return translated;
  }

  /** A bad argument from the caller: a URL, a property, a column index. */
  /**
   * A failure while getConnection sets up the connection: every reason but authentication is SQLState 08001 (the
   * client could not establish the connection), so pools and tools treat it as a connection failure and retry.
   */
  static SQLException connecting(ThallusException e) {
    if (e.code() == StatusCode.UNAUTHENTICATED) {
      return from(e);
    }
    String message = "cannot connect: " + e.getMessage();
    return switch (e.code()) {
      case UNAVAILABLE, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED ->
          new java.sql.SQLTransientConnectionException(message, "08001", e.code().wireValue(), e);
      default -> new java.sql.SQLNonTransientConnectionException(message, "08001", e.code().wireValue(), e);
    };
  }

  static SQLException invalid(String message) {
    return new SQLException(message, "HY000");
  }

  static SQLException badColumn(String message) {
    return new SQLException(message, "42S22");
  }

  /** A value that does not convert to what the getter asks for. */
  static SQLDataException conversion(String message) {
    return new SQLDataException(message, "22018");
  }

  static SQLDataException outOfRange(String message) {
    return new SQLDataException(message, "22003");
  }

  static SQLException closed(String what) {
    return new SQLNonTransientConnectionException(what + " is closed", what.equals("connection") ? "08003" : "HY010");
  }

  /** {@code Wrapper.unwrap} for every driver object: itself, if it is one, or an error naming both types. */
  static <T> T unwrap(Object self, Class<T> type) throws SQLException {
    if (type.isInstance(self)) {
      return type.cast(self);
    }
    throw invalid("a " + self.getClass().getSimpleName() + " is not a " + type.getName());
  }

  /** {@code what} is not supported, and {@code why} says the real reason. */
  static SQLFeatureNotSupportedException unsupported(String what, String why) {
    return new SQLFeatureNotSupportedException(what + " is not supported: " + why, "0A000");
  }

  /** A result-set operation that would need to move back, jump, or write. */
  static SQLFeatureNotSupportedException unsupported(String what) {
    return unsupported(what, "Thallus result sets are forward-only and read-only");
  }

  static final String NO_SAVEPOINTS = "DuckDB has no savepoints (a transaction commits or rolls back as a whole)";
}
