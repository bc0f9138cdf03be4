package io.thallus.duckdb;

import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.regex.Pattern;
import org.duckdb.DuckDBConnection;

/**
 * The databases a session's ATTACH statements attached: DuckDB attaches for the whole database, so they are detached
 * when the session ends and their files are free again. Used under the session's lock.
 */
final class SessionAttachments {
  /** An ATTACH statement (the one statement whose effect outlives the session unless undone). */
  private static final Pattern ATTACH = Pattern.compile("(?is)\\s*ATTACH\\b");

  private final DuckDBConnection connection;
  private final Set<String> attached = new LinkedHashSet<>();

  SessionAttachments(DuckDBConnection connection) {
    this.connection = connection;
  }

  /** What is attached before {@code sql} runs, if it is an ATTACH; null otherwise. */
  Set<String> before(String sql) throws SQLException {
    return ATTACH.matcher(sql).lookingAt() ? databases() : null;
  }

  /** Records what the ATTACH that ran since {@link #before} attached. */
  void after(Set<String> before) throws SQLException {
    if (before != null) {
      Set<String> added = databases();
      added.removeAll(before);
      attached.addAll(added);
    }
  }

  /** Detaches them all (after rolling back a transaction the client left open: DETACH does not run inside one). */
  void detachAll() {
    if (attached.isEmpty()) {
      return;
    }
    run("ROLLBACK");
    for (String name : attached) {
      // One in use as another session's default catalog stays until the database closes.
      run("DETACH DATABASE IF EXISTS " + DuckDBSql.identifier(name));
    }
  }

  private void run(String sql) {
    try (Statement statement = connection.createStatement()) {
      statement.execute(sql);
    } catch (SQLException e) {
      // Nothing to roll back, or still in use: nothing more to do at the session's end.
    }
  }

  private Set<String> databases() throws SQLException {
    Set<String> names = new HashSet<>();
    try (Statement statement = connection.createStatement();
         java.sql.ResultSet rows = statement.executeQuery("SELECT database_name FROM duckdb_databases()")) {
      while (rows.next()) {
        names.add(rows.getString(1));
      }
    }
    return names;
  }
}
