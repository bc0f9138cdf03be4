package io.thallus.flightsql;

import java.util.regex.Pattern;

/**
 * What the Flight SQL door reads from a statement's text without running it: whether it answers rows (then its schema
 * is planned, and it runs when its ticket is read) and whether it may have placeholders (then DuckDB is asked for
 * their types).
 */
final class StatementText {
  /** Statements whose answer is rows: their schema is planned without running them. */
  private static final Pattern RETURNS_ROWS = Pattern.compile(
      "(?is)^\\s*(\\(|SELECT\\b|WITH\\b|FROM\\b|VALUES\\b|TABLE\\b|SHOW\\b|DESCRIBE\\b|SUMMARIZE\\b|EXPLAIN\\b"
          + "|PRAGMA\\b|CALL\\b)");

  private StatementText() {}

  static boolean returnsRows(String sql) {
    return RETURNS_ROWS.matcher(sql).lookingAt();
  }

  /**
   * Whether the SQL may have placeholders ({@code ?}, {@code $1}) outside string literals, quoted names and
   * comments: without any, asking DuckDB for their types (a round trip) is skipped.
   */
  static boolean mayHavePlaceholders(String sql) {
    for (int i = 0; i < sql.length(); i++) {
      char c = sql.charAt(i);
      if (c == '\'' || c == '"') {
        int end = sql.indexOf(c, i + 1);
        if (end < 0) {
          return true;
        }
        i = end;
      } else if (c == '-' && i + 1 < sql.length() && sql.charAt(i + 1) == '-') {
        int end = sql.indexOf('\n', i);
        if (end < 0) {
          return false;
        }
        i = end;
      } else if (c == '/' && i + 1 < sql.length() && sql.charAt(i + 1) == '*') {
        int end = sql.indexOf("*/", i + 2);
        if (end < 0) {
          return true;
        }
        i = end + 1;
      } else if (c == '?' || c == '$') {
        return true;
      }
    }
    return false;
  }
}
