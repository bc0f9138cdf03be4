package io.thallus.spark;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;

/**
 * A table of the server's database as SQL names it: {@code [catalog.][schema.]table}, each part quoted when sent.
 * Writes stage their rows beside it, in tables of the same schema named {@link #STAGING_PREFIX}..., so the commit
 * moves them within one database and one transaction, and may rename one into the table's place.
 */
record TableName(String catalogOrNull, String schemaOrNull, String table) implements Serializable {
  /** The start of a staging table's name; the catalog does not list such tables. */
  static final String STAGING_PREFIX = "thallus_staging_";

  static TableName of(String... parts) {
    return switch (parts.length) {
      case 1 -> new TableName(null, null, parts[0]);
      case 2 -> new TableName(null, parts[0], parts[1]);
      case 3 -> new TableName(parts[0], parts[1], parts[2]);
      default -> throw new IllegalArgumentException("a table name has 1 to 3 parts, got " + List.of(parts));
    };
  }

  /**
   * The {@code table} option: SQL's dotted name ({@code t}, {@code s.t}, {@code db.s.t}, parts plain or
   * double-quoted), or, when it is not one, the whole text as one name ({@code my table}).
   */
  static TableName parse(String text) {
    List<String> parts = new ArrayList<>();
    int i = 0;
    while (i < text.length()) {
      StringBuilder part = new StringBuilder();
      if (text.charAt(i) == '"') {
        i++;
        while (true) {
          if (i >= text.length()) {
            return new TableName(null, null, text);
          }
          char c = text.charAt(i++);
          if (c == '"') {
            if (i < text.length() && text.charAt(i) == '"') {
              part.append('"');
              i++;
              continue;
            }
            break;
          }
          part.append(c);
        }
      } else {
        while (i < text.length() && text.charAt(i) != '.') {
          char c = text.charAt(i++);
          if (!(Character.isLetterOrDigit(c) || c == '_' || c == '$')) {
            return new TableName(null, null, text);
          }
          part.append(c);
        }
      }
      if (part.isEmpty()) {
        return new TableName(null, null, text);
      }
      parts.add(part.toString());
      if (i < text.length()) {
        if (text.charAt(i) != '.' || i == text.length() - 1) {
          return new TableName(null, null, text);
        }
        i++;
      }
    }
    return parts.isEmpty() || parts.size() > 3 ? new TableName(null, null, text) : of(parts.toArray(String[]::new));
  }

  String sql() {
    StringBuilder sql = new StringBuilder();
    if (catalogOrNull != null) {
      sql.append(Sql.identifier(catalogOrNull)).append('.');
    }
    if (schemaOrNull != null) {
      sql.append(Sql.identifier(schemaOrNull)).append('.');
    }
    return sql.append(Sql.identifier(table)).toString();
  }

  /** A staging table beside this one: {@code name} after {@link #STAGING_PREFIX}, in the same schema. */
  TableName staging(String name) {
    return new TableName(catalogOrNull, schemaOrNull, name.startsWith(STAGING_PREFIX) ? name : STAGING_PREFIX + name);
  }

  /** The schema's condition in duckdb_tables() and friends: its database and schema (current ones if unnamed). */
  String schemaCondition() {
    return schemaCondition(true);
  }

  /** As {@link #schemaCondition()}, ignoring case unless {@code caseSensitive}. */
  String schemaCondition(boolean caseSensitive) {
    return (catalogOrNull == null ? "database_name = current_database()"
        : matches("database_name", catalogOrNull, caseSensitive))
        + " AND " + (schemaOrNull == null ? "schema_name = current_schema()"
        : matches("schema_name", schemaOrNull, caseSensitive));
  }

  /** SQL: the text column {@code column} equals {@code name}, or equals it but for case. */
  static String matches(String column, String name, boolean caseSensitive) {
    return caseSensitive ? column + " = " + Sql.string(name)
        : "lower(" + column + ") = lower(" + Sql.string(name) + ")";
  }

  @Override
  public String toString() {
    return sql();
  }
}
