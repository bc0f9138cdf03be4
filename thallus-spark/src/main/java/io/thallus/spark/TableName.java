package io.thallus.spark;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;

/**
 * A table of the server's database as SQL names it: {@code [catalog.][schema.]table}, each part quoted when sent.
 * Writes stage their rows beside it, in the schema {@link #STAGING_SCHEMA} of the same database, so the commit
 * moves them within one database and one transaction.
 */
record TableName(String catalogOrNull, String schemaOrNull, String table) implements Serializable {
  static final String STAGING_SCHEMA = "thallus_staging";

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

  /** The staging schema of this table's database, as SQL names it. */
  String stagingSchemaSql() {
    return (catalogOrNull == null ? "" : Sql.identifier(catalogOrNull) + ".") + Sql.identifier(STAGING_SCHEMA);
  }

  /** A staging table of this table's database. */
  TableName staging(String name) {
    return new TableName(catalogOrNull, STAGING_SCHEMA, name);
  }

  @Override
  public String toString() {
    return sql();
  }
}
