package io.thallus.jdbc;

import java.sql.ParameterMetaData;
import java.sql.SQLException;
import java.sql.Types;

/** Finds a statement's {@code ?} placeholders: those outside quotes, identifiers and comments. */
final class Placeholders {
  private Placeholders() {}

  static int count(String sql) {
    int count = 0;
    int i = 0;
    int n = sql.length();
    while (i < n) {
      char c = sql.charAt(i);
      if (c == '\'' || c == '"') {
        i = skipQuoted(sql, i, c);
      } else if (c == '-' && i + 1 < n && sql.charAt(i + 1) == '-') {
        int end = sql.indexOf('\n', i);
        i = end < 0 ? n : end + 1;
      } else if (c == '/' && i + 1 < n && sql.charAt(i + 1) == '*') {
        int end = sql.indexOf("*/", i + 2);
        i = end < 0 ? n : end + 2;
      } else {
        if (c == '?') {
          count++;
        }
        i++;
      }
    }
    return count;
  }

  /** The index after a quoted run; a doubled quote stays inside it. */
  private static int skipQuoted(String sql, int start, char quote) {
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

  /** What is known before execution: how many; their types are DuckDB's to infer. */
  static final class MetaData implements ParameterMetaData {
    private final int count;

    MetaData(int count) {
      this.count = count;
    }

    private void check(int index) throws SQLException {
      if (index < 1 || index > count) {
        throw Errors.invalid("parameter " + index + " is outside 1.." + count);
      }
    }

    @Override
    public int getParameterCount() {
      return count;
    }

    @Override
    public int isNullable(int index) throws SQLException {
      check(index);
      return parameterNullableUnknown;
    }

    @Override
    public boolean isSigned(int index) throws SQLException {
      check(index);
      return true;
    }

    @Override
    public int getPrecision(int index) throws SQLException {
      check(index);
      return 0;
    }

    @Override
    public int getScale(int index) throws SQLException {
      check(index);
      return 0;
    }

    @Override
    public int getParameterType(int index) throws SQLException {
      check(index);
      return Types.OTHER;
    }

    @Override
    public String getParameterTypeName(int index) throws SQLException {
      check(index);
      return "ANY";
    }

    @Override
    public String getParameterClassName(int index) throws SQLException {
      check(index);
      return Object.class.getName();
    }

    @Override
    public int getParameterMode(int index) throws SQLException {
      check(index);
      return parameterModeIn;
    }

    @Override
    public <T> T unwrap(Class<T> type) throws SQLException {
      return Errors.unwrap(this, type);
    }

    @Override
    public boolean isWrapperFor(Class<?> type) {
      return type.isInstance(this);
    }
  }
}
