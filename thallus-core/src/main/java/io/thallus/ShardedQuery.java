package io.thallus;

import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * What a sharded read asks of each shard: the columns to send and a row filter, both run on each shard's server, so
 * only the rows and columns asked for travel. Its shape is all that can be asked: each row of the answer comes
 * from one shard, so the union of the shards' answers is the answer over the whole dataset. Global operations —
 * an aggregate, ORDER BY, LIMIT, DISTINCT, a join — would be computed per shard and come back wrong when merged;
 * they have no place here (run them over the merged rows, or use the Spark connector, which merges partial
 * aggregates). The filter is an SQL boolean expression over one row's columns; the server refuses aggregates and
 * window functions in it (they are not allowed in WHERE), and a subquery is refused here (it would see one shard).
 */
public final class ShardedQuery {
  private static final Pattern SUBQUERY = Pattern.compile("\\bselect\\b");

  private final List<String> columns;
  private final Optional<String> filter;

  private ShardedQuery(List<String> columns, Optional<String> filter) {
    this.columns = columns;
    this.filter = filter;
  }

  /** Every column, every row. */
  public static ShardedQuery all() {
    return new ShardedQuery(List.of(), Optional.empty());
  }

  /** Only these columns (by name, as the dataset's schema has them); none means every column. */
  public ShardedQuery columns(List<String> names) {
    for (String name : names) {
      if (name.isEmpty() || name.indexOf('\0') >= 0) {
        throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "not a column name: '" + name + "'");
      }
    }
    return new ShardedQuery(List.copyOf(names), filter);
  }

  /** Only rows for which {@code predicate} (an SQL boolean expression over the row's columns) is true. */
  public ShardedQuery filter(String predicate) {
    Objects.requireNonNull(predicate, "predicate");
    if (predicate.isBlank()) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "an empty filter");
    }
    if (SUBQUERY.matcher(withoutLiterals(predicate).toLowerCase(Locale.ROOT)).find()) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "a sharded read's filter cannot hold a subquery: each "
          + "shard would run it over its own rows only: " + predicate);
    }
    return new ShardedQuery(columns, Optional.of(predicate));
  }

  public List<String> columns() {
    return columns;
  }

  public Optional<String> filter() {
    return filter;
  }

  /** The SQL each shard runs over its part, bound as {@code dataset}. */
  String shardSql() {
    StringBuilder sql = new StringBuilder("SELECT ");
    if (columns.isEmpty()) {
      sql.append('*');
    } else {
      for (int i = 0; i < columns.size(); i++) {
        sql.append(i == 0 ? "" : ", ").append('"').append(columns.get(i).replace("\"", "\"\"")).append('"');
      }
    }
    sql.append(" FROM dataset");
    filter.ifPresent(f -> sql.append(" WHERE (").append(f).append(')'));
    return sql.toString();
  }

  /** The text with string literals and quoted names blanked, so that a 'select' inside them is not a subquery. */
  private static String withoutLiterals(String text) {
    StringBuilder out = new StringBuilder(text.length());
    char quote = 0;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (quote == 0 && (c == '\'' || c == '"')) {
        quote = c;
        out.append(' ');
      } else if (quote != 0 && c == quote) {
        quote = 0;
        out.append(' ');
      } else {
        out.append(quote == 0 ? c : ' ');
      }
    }
    return out.toString();
  }

  @Override
  public String toString() {
    return shardSql();
  }
}
