package io.thallus.spark;

/** DuckDB SQL text: quoting of names and string literals. */
final class Sql {
  private Sql() {}

  static String identifier(String name) {
    return "\"" + name.replace("\"", "\"\"") + "\"";
  }

  static String string(String text) {
    return "'" + text.replace("'", "''") + "'";
  }
}
