package io.thallus.duckdb;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.nio.file.Path;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.Map;
import org.duckdb.DuckDBConnection;

/**
 * A connection's views of a request's named datasets ({@code QuerySpec.namedDatasets}): temporary views over the
 * files, one per name. A session keeps what it bound, so a run of requests binding the same datasets binds once and
 * a request binding others drops the views it does not bind (no view of an earlier request stays readable).
 */
final class NamedDatasetViews {
  private Map<String, Path> bound = Map.of();

  /** Makes exactly {@code named} the connection's named views. */
  void bind(DuckDBConnection connection, Map<String, Path> named) throws SQLException {
    if (named.equals(bound)) {
      return;
    }
    try (Statement statement = connection.createStatement()) {
      for (String name : bound.keySet()) {
        if (!named.containsKey(name)) {
          statement.execute("DROP VIEW IF EXISTS temp.main." + identifier(name));
        }
      }
    }
    Map<String, Path> done = new LinkedHashMap<>();
    try {
      for (Map.Entry<String, Path> entry : named.entrySet()) {
        create(connection, entry.getKey(), entry.getValue());
        done.put(entry.getKey(), entry.getValue());
      }
    } finally {
      // After a failure, what was bound is dropped by the next request that binds otherwise.
      bound = Map.copyOf(done);
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
      statement.execute("CREATE OR REPLACE TEMP VIEW " + identifier(name) + " AS SELECT * FROM "
          + DatasetFiles.of(path).source());
    }
  }

  private static String identifier(String name) {
    return "\"" + name.replace("\"", "\"\"") + "\"";
  }
}
