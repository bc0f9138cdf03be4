package io.thallus.duckdb;

/** SQL text this engine writes itself: one way of quoting a name, wherever a name goes into a statement. */
final class DuckDBSql {
  private DuckDBSql() {}

  /** {@code name} as a quoted identifier: in double quotes, each double quote in it doubled. */
  static String identifier(String name) {
    return "\"" + name.replace("\"", "\"\"") + "\"";
  }
}
