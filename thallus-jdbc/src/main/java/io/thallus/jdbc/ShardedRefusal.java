package io.thallus.jdbc;

import io.thallus.Location;
import io.thallus.ThallusClient;
import io.thallus.ThallusException;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Refuses a statement that reads a sharded dataset ({@code shards.lineitem}, docs/sharding.md) before it is sent.
 * A statement runs on the connection's one server, whose DuckDB holds only that server's parts: answering it over
 * every shard would take splitting it into per-shard SQL and merging the answers (aggregates, ORDER BY, LIMIT,
 * joins), a query planner in the driver. The Java API ({@code io.thallus.ShardedStream}) and Spark
 * ({@code thallus.shards.lineitem}) read sharded datasets.
 *
 * <p>A reference is the two-part name {@code shards.NAME} (each part plain or double-quoted, outside string
 * literals and comments) whose NAME the server declares ({@link ThallusClient#shardedDatasets}, asked once, the
 * first time a statement names {@code shards} at all: a server's declarations are fixed while it runs).
 */
final class ShardedRefusal {
  /** SQLState of the refusal: feature not supported. */
  static final String SQL_STATE = "0A000";

  private final ThallusClient client;
  private final Location server;
  private volatile Set<String> declared;

  ShardedRefusal(ThallusClient client, Location server) {
    this.client = client;
    this.server = server;
  }

  /** Throws when {@code sql} reads a sharded dataset the server declares. */
  void check(String sql) throws SQLException {
    if (!sql.toLowerCase(Locale.ROOT).contains("shards")) {
      return; // the common case: no round trip, no scan
    }
    Optional<String> name = reference(sql, declared());
    if (name.isPresent()) {
      throw new SQLFeatureNotSupportedException("jdbc:thallus does not read sharded dataset shards." + name.get()
          + ": its parts live on several servers and a statement runs on one (" + server + "), whose DuckDB holds "
          + "only its own parts; answering it over every shard would need the driver to split the statement per "
          + "shard and merge the answers (aggregates, ORDER BY, LIMIT, joins). Read it with the Java API "
          + "(io.thallus.ShardedStream) or Spark (thallus.shards." + name.get() + "); see docs/sharding.md",
          SQL_STATE);
    }
  }

  private Set<String> declared() throws SQLException {
    Set<String> names = declared;
    if (names == null) {
      try {
        names = client.shardedDatasets().stream().map(n -> n.toLowerCase(Locale.ROOT)).collect(Collectors.toSet());
      } catch (ThallusException e) {
        throw Errors.from(e);
      }
      declared = names;
    }
    return names;
  }

  /** The first {@code shards.NAME} in {@code sql} whose NAME (lowercase) is in {@code declared}, as written. */
  static Optional<String> reference(String sql, Set<String> declared) {
    List<String> tokens = SqlTokens.of(sql);
    for (int i = 0; i + 2 < tokens.size(); i++) {
      // shards.x, not db.shards.x (a schema of an attached database).
      boolean qualified = i > 0 && tokens.get(i - 1).equals(".");
      if (qualified || !tokens.get(i + 1).equals(".") || !SqlTokens.isIdentifier(tokens.get(i))
          || !SqlTokens.isIdentifier(tokens.get(i + 2))) {
        continue;
      }
      String name = SqlTokens.name(tokens.get(i + 2));
      if (SqlTokens.name(tokens.get(i)).equalsIgnoreCase("shards")
          && declared.contains(name.toLowerCase(Locale.ROOT))) {
        return Optional.of(name);
      }
    }
    return Optional.empty();
  }
}
