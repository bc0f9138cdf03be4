package io.thallus.duckdb;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.nio.file.Path;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.duckdb.DuckDBConnection;

/**
 * A connection's views of a request's named datasets ({@code QuerySpec.namedDatasets}): temporary views over the
 * files, one per name. Every request drops the views it does not bind and makes those it binds again, so no view of
 * an earlier request stays readable, also when that request failed part-way or the session's transaction that made
 * or dropped a view rolled back (a binding cached across requests goes stale in both cases).
 */
final class NamedDatasetViews {
  /**
   * Names of views this session made that may still exist: a name leaves only once its drop committed (outside a
   * transaction), since a rollback would bring the view back.
   */
  private final Set<String> made = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);

  /** Makes exactly {@code named} the connection's named views. */
  void bind(DuckDBConnection connection, Map<String, Path> named) throws SQLException {
    boolean durable = !DuckDBNatives.inTransaction(connection);
    try (Statement statement = connection.createStatement()) {
      for (Iterator<String> it = made.iterator(); it.hasNext(); ) {
        String name = it.next();
        if (!named.containsKey(name)) {
          statement.execute("DROP VIEW IF EXISTS temp.main." + DuckDBSql.identifier(name));
          if (durable) {
            it.remove();
          }
        }
      }
    }
    for (Map.Entry<String, Path> entry : named.entrySet()) {
      if (!made.contains(entry.getKey())) {
        refuseTheSessionsOwn(connection, entry.getKey());
      }
      made.add(entry.getKey());
      create(connection, entry.getKey(), entry.getValue());
    }
  }

  /**
   * A temporary view or table of the session's own under a dataset's name would be replaced, and then dropped by
   * the next request: refused instead.
   */
  private static void refuseTheSessionsOwn(DuckDBConnection connection, String name) throws SQLException {
    try (PreparedStatement statement = connection.prepareStatement("SELECT count(*) FROM (SELECT view_name AS name "
        + "FROM duckdb_views() WHERE temporary UNION ALL SELECT table_name FROM duckdb_tables() WHERE temporary) "
        + "WHERE lower(name) = lower(?)")) {
      statement.setString(1, name);
      try (ResultSet rows = statement.executeQuery()) {
        if (rows.next() && rows.getLong(1) > 0) {
          throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "dataset name '" + name + "' is the name of a "
              + "temporary view or table of this session: name the dataset otherwise");
        }
      }
    }
  }

  /** Binds {@code named} on a connection of no session (nothing to drop first). */
  static void bindAll(DuckDBConnection connection, Map<String, Path> named) throws SQLException {
    for (Map.Entry<String, Path> entry : named.entrySet()) {
      create(connection, entry.getKey(), entry.getValue());
    }
  }

  /**
   * The files at {@code path} as the temporary view {@code name}. Only files: a DuckDB database file is attached as
   * the request's {@code dataset}, never as a view.
   */
  private static void create(DuckDBConnection connection, String name, Path path) throws SQLException {
    if (DuckDBEngine.isDatabaseFile(path)) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "dataset '" + name + "' is a DuckDB database file ("
          + path.getFileName() + "): a named dataset is Parquet, CSV or JSON files; bind a database file as the "
          + "request's dataset");
    }
    try (Statement statement = connection.createStatement()) {
      statement.execute("CREATE OR REPLACE TEMP VIEW " + DuckDBSql.identifier(name) + " AS SELECT * FROM "
          + DatasetFiles.of(path).source());
    }
  }
}
