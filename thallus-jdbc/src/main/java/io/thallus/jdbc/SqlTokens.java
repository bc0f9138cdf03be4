package io.thallus.jdbc;

import java.util.ArrayList;
import java.util.List;

/**
 * The identifiers and punctuation of an SQL text, as DuckDB's lexer would cut them, less string literals
 * ({@code '...'}, {@code $tag$...$tag$}), comments ({@code -- ...}, {@code /* ... *}{@code /}), numbers and white
 * space: enough to find a name in a statement without mistaking a literal or a comment for one. Identifiers are
 * returned as written, a quoted one with its quotes ({@link #name} gives the name either stands for).
 */
final class SqlTokens {
  private SqlTokens() {}

  static List<String> of(String sql) {
    List<String> tokens = new ArrayList<>();
    int i = 0;
    int n = sql.length();
    while (i < n) {
      char c = sql.charAt(i);
      if (Character.isWhitespace(c)) {
        i++;
      } else if (c == '-' && i + 1 < n && sql.charAt(i + 1) == '-') {
        int end = sql.indexOf('\n', i);
        i = end < 0 ? n : end + 1;
      } else if (c == '/' && i + 1 < n && sql.charAt(i + 1) == '*') {
        int end = sql.indexOf("*/", i + 2);
        i = end < 0 ? n : end + 2;
      } else if (c == '\'') {
        i = closing(sql, i, '\'');
      } else if (c == '"') {
        int end = closing(sql, i, '"');
        tokens.add(sql.substring(i, end));
        i = end;
      } else if (c == '$' && dollarTag(sql, i) > 0) {
        String tag = sql.substring(i, dollarTag(sql, i));
        int end = sql.indexOf(tag, i + tag.length());
        i = end < 0 ? n : end + tag.length();
      } else if (Character.isLetter(c) || c == '_') {
        int start = i;
        while (i < n && (Character.isLetterOrDigit(sql.charAt(i)) || sql.charAt(i) == '_' || sql.charAt(i) == '$')) {
          i++;
        }
        tokens.add(sql.substring(start, i));
      } else if (Character.isDigit(c)) {
        while (i < n && (Character.isLetterOrDigit(sql.charAt(i)) || sql.charAt(i) == '.')) {
          i++;
        }
      } else {
        tokens.add(String.valueOf(c));
        i++;
      }
    }
    return tokens;
  }

  /** After the literal or quoted identifier opened at {@code start} ({@code ''} inside it is one quote). */
  private static int closing(String sql, int start, char quote) {
    int i = start + 1;
    while (i < sql.length()) {
      if (sql.charAt(i) == quote) {
        if (i + 1 < sql.length() && sql.charAt(i + 1) == quote) {
          i += 2;
          continue;
        }
        return i + 1;
      }
      i++;
    }
    return sql.length();
  }

  /** The end of a dollar-quote tag ({@code $$} or {@code $name$}) at {@code start}, or 0 when there is none. */
  private static int dollarTag(String sql, int start) {
    int i = start + 1;
    while (i < sql.length() && (Character.isLetterOrDigit(sql.charAt(i)) || sql.charAt(i) == '_')) {
      i++;
    }
    return i < sql.length() && sql.charAt(i) == '$' ? i + 1 : 0;
  }

  static boolean isIdentifier(String token) {
    char c = token.charAt(0);
    return c == '"' || Character.isLetter(c) || c == '_';
  }

  /** The name an identifier token stands for (DuckDB compares names ignoring case, quoted or not). */
  static String name(String token) {
    if (token.startsWith("\"")) {
      String inner = token.length() >= 2 && token.endsWith("\"") ? token.substring(1, token.length() - 1) : "";
      return inner.replace("\"\"", "\"");
    }
    return token;
  }
}
