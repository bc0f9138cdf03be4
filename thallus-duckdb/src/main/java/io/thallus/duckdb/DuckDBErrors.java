package io.thallus.duckdb;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** DuckDB's error messages with the status a client can act on (they are DuckDB's only account of a failure). */
final class DuckDBErrors {
  private static final Pattern LOCKED_SETTING = Pattern.compile(
      "(?s).*Cannot change configuration option \"+([^\"]+)\"+ - the configuration has been locked.*");

  private DuckDBErrors() {}

  /**
   * What a failed statement of {@code spec} tells its client: a cancel as CANCELLED (re-running a cancelled query to
   * learn why it stopped would run it to the end), DuckDB's hidden streaming error as {@code engine} diagnoses it,
   * anything else classified.
   */
  static ThallusException failure(java.sql.SQLException e, io.thallus.engine.QuerySpec spec,
      io.thallus.engine.CancelSignal cancel, DuckDBEngine engine) {
    String message = e.getMessage() == null ? e.toString() : e.getMessage();
    if (cancel.isCancelled()) {
      return ThallusException.of(StatusCode.CANCELLED, "the query was cancelled", e);
    }
    if (message.contains(DuckDBEngine.HIDDEN_ERROR)) {
      message = engine.diagnose(spec, cancel).orElse("DuckDB stopped the statement while producing its first rows "
          + "and, streaming, does not say why (DuckDB: " + message + ")");
    }
    return classify(message, e);
  }

  /** DuckDB's message with the status a client can act on. */
  static ThallusException classify(String message, Throwable cause) {
    if (message.contains("Conflict on") || message.contains("write-write conflict")
        || message.contains("Transaction conflict") || message.contains("TransactionContext Error: Conflict")) {
      return ThallusException.of(StatusCode.ABORTED, message
          + " (another transaction changed the same rows; this transaction is aborted: roll back and retry)", cause);
    }
    Matcher locked = LOCKED_SETTING.matcher(message);
    if (locked.matches()) {
      return ThallusException.of(StatusCode.PERMISSION_DENIED, "the setting " + locked.group(1) + " is locked on "
          + "this server (the server's configuration protects its data root and limits); a session may change "
          + "search_path, schema (USE) and variables (SET VARIABLE)", cause);
    }
    if (message.contains("Current transaction is aborted")) {
      return ThallusException.of(StatusCode.ABORTED, message, cause);
    }
    if (message.contains("read-only mode") || message.contains("read only mode")) {
      return ThallusException.of(StatusCode.PERMISSION_DENIED, message + " (the server serves its database "
          + "read-only)", cause);
    }
    return ThallusException.of(StatusCode.INVALID_ARGUMENT, message, cause);
  }
}
