package io.thallus.duckdb;

import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;
import java.util.StringJoiner;
import java.util.TreeSet;
import org.duckdb.DuckDBConnection;
import org.duckdb.DuckDBResultSetMetaData;
import org.duckdb.StatementReturnType;

/**
 * TIME WITH TIME ZONE columns as DuckDB's text of them ({@code 12:00:00+05:30}), for a client that asked for DuckDB's
 * type names (the JDBC driver, which reads them as DuckDB's own driver does: an OffsetTime). DuckDB's Arrow export
 * writes such a column as a time64 of its local time and drops the offset ({@code 12:00+05:30} arrives as 12:00).
 * The export that keeps it ({@code arrow_lossless_conversion}: an {@code arrow.opaque} {@code time_tz}) is a setting
 * of the whole database, locked with the server's configuration, and it changes other types' export too (BOOLEAN,
 * HUGEINT, UUID, BIT, JSON). So a query of one SELECT with such columns at its top level runs wrapped, each such
 * column cast to text: {@code SELECT * REPLACE (CAST(q."t" AS VARCHAR) AS "t") FROM (<sql>) AS q}. The wrap only
 * projects: the rows, their order and the other columns are the query's. A prepared statement's columns are known
 * before it runs; a plain statement's only once it has run, so one with such columns runs again, wrapped (a SELECT
 * that calls {@code nextval} advances its sequence twice). A query whose column names repeat (a subquery renames the
 * second {@code a} to {@code a_1}), or that is not one SELECT, runs as it is.
 */
final class OffsetTimeText {
  /** DuckDB's name of the type, as its result metadata and the column's engine type name say it. */
  static final String TYPE = "TIME WITH TIME ZONE";

  /**
   * The wrapped query and the columns it sends as text.
   *
   * @param sql the query wrapped
   * @param columns the 0-based positions of the columns sent as text
   */
  record Wrapped(String sql, Set<Integer> columns) {}

  private OffsetTimeText() {}

  /**
   * The wrap of {@code sql}, whose columns are {@code meta} (its prepared statement's, or its result's once run);
   * null where none is needed or none can be made.
   */
  static Wrapped of(DuckDBConnection connection, String sql, ResultSetMetaData meta) throws SQLException {
    if (!(meta instanceof DuckDBResultSetMetaData duckdb)
        || duckdb.getReturnType() != StatementReturnType.QUERY_RESULT) {
      return null;
    }
    Set<Integer> offsets = new TreeSet<>();
    Set<String> names = new HashSet<>();
    StringJoiner casts = new StringJoiner(", ");
    for (int column = 1; column <= meta.getColumnCount(); column++) {
      String name = meta.getColumnName(column);
      if (!names.add(name.toLowerCase(Locale.ROOT))) {
        return null;
      }
      if (TYPE.equalsIgnoreCase(meta.getColumnTypeName(column))) {
        offsets.add(column - 1);
        String quoted = DuckDBSql.identifier(name);
        casts.add("CAST(thallus_offsets." + quoted + " AS VARCHAR) AS " + quoted);
      }
    }
    if (offsets.isEmpty()) {
      return null;
    }
    // DuckDB's parser is asked first (inside a transaction a wrap DuckDB cannot plan would abort it), on a connection
    // of its own: the statement's result may still be open on this one.
    try (DuckDBConnection parser = (DuckDBConnection) connection.duplicate()) {
      if (!DuckDBStatements.selectShaped(parser, sql)) {
        return null;
      }
    }
    return new Wrapped("SELECT * REPLACE (" + casts + ") FROM (" + DuckDBStatements.body(sql)
        + "\n) AS thallus_offsets", offsets);
  }
}
