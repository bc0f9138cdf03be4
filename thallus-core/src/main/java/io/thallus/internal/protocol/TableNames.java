package io.thallus.internal.protocol;

import io.thallus.StatusCode;
import io.thallus.ThallusException;

/**
 * The table names an ingest accepts, as SQL writes them: {@code t}, {@code schema.t} or {@code catalog.schema.t},
 * each part a plain identifier ({@code [A-Za-z_][A-Za-z0-9_$]*}) or double-quoted ({@code "a ""b"""}, not empty).
 * Checked by one pass over the characters, never by a regular expression: a regex's alternation inside a repeat
 * recurses once per character and overflowed the stack on a quoted name of a few thousand characters. A name is
 * also at most {@link #MAX_CHARS} characters, so a refusal (which names it) stays small.
 */
public final class TableNames {
  /** The longest table name, quotes and dots included. */
  public static final int MAX_CHARS = 1024;
  private static final int MAX_PARTS = 3;

  private TableNames() {}

  /** Whether {@code table} is a table name of at most {@link #MAX_CHARS} characters. */
  public static boolean isValid(String table) {
    return table != null && table.length() <= MAX_CHARS && wellFormed(table);
  }

  /** Throws INVALID_ARGUMENT naming the problem unless {@code table} {@linkplain #isValid is valid}. */
  public static void check(String table) {
    if (table.length() > MAX_CHARS) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "a table name of " + table.length()
          + " characters is over the maximum of " + MAX_CHARS + " characters");
    }
    if (!wellFormed(table)) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "\"" + table + "\" is not a table name: use t, "
          + "schema.t or catalog.schema.t, each part a plain identifier or double-quoted");
    }
  }

  private static boolean wellFormed(String name) {
    int at = 0;
    for (int part = 1; ; part++) {
      at = partEnd(name, at);
      if (at < 0) {
        return false;
      }
      if (at == name.length()) {
        return true;
      }
      if (name.charAt(at) != '.' || part == MAX_PARTS) {
        return false;
      }
      at++;
    }
  }

  /** Where the part starting at {@code from} ends, or -1 when no part starts there. */
  private static int partEnd(String name, int from) {
    if (from >= name.length()) {
      return -1;
    }
    char first = name.charAt(from);
    if (first == '"') {
      int at = from + 1;
      while (at < name.length()) {
        if (name.charAt(at) != '"') {
          at++;
        } else if (at + 1 < name.length() && name.charAt(at + 1) == '"') {
          at += 2;
        } else {
          // The closing quote; a quoted part holds at least one character.
          return at == from + 1 ? -1 : at + 1;
        }
      }
      return -1;
    }
    if (!plainStart(first)) {
      return -1;
    }
    int at = from + 1;
    while (at < name.length() && (plainStart(name.charAt(at)) || isDigit(name.charAt(at)) || name.charAt(at) == '$')) {
      at++;
    }
    return at;
  }

  private static boolean plainStart(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
  }

  private static boolean isDigit(char c) {
    return c >= '0' && c <= '9';
  }
}
