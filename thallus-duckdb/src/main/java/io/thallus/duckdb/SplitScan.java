package io.thallus.duckdb;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.engine.CancelSignal;
import io.thallus.engine.QueryResult;
import io.thallus.engine.QuerySpec;
import io.thallus.engine.TransactionMode;
import java.nio.charset.StandardCharsets;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.arrow.memory.BufferAllocator;
import org.duckdb.DuckDBConnection;

/**
 * One query's rows as several DuckDB results, each on a connection of its own, so several threads convert and send
 * at once (one DuckDB result is one consumer: its Arrow export converts on the thread that reads it).
 *
 * <p>What splits: a single {@code SELECT} of projections and filters over one base table ({@code FROM t [AS a]
 * [WHERE ...]}), no parameters and no dataset (named or not), which DuckDB plans as only a table scan, filters and
 * projections.
 * Partition i reads the table through {@code (SELECT * FROM t WHERE rowid >= a AND rowid < b) AS t}: DuckDB pushes
 * the rowid range into the scan, which then reads only that range's row groups. Ranges follow DuckDB's row groups
 * (122,880 rows), so a table of fewer row groups than parts gives fewer parts. Anything else (aggregates, joins,
 * ORDER BY, LIMIT, DISTINCT, window functions, CTEs, set operations, views, table functions) stays one result.
 *
 * <p>One snapshot: every partition's transaction begins (and touches the table, which is when DuckDB takes its
 * snapshot) inside a window in which no statement that may commit ran or began ({@link WriteWindow}); otherwise
 * the query is not split. An {@code INSERT ... RETURNING} whose rows still stream commits when its result closes:
 * it stays in that count until then, so no split begins while one is open.
 */
final class SplitScan {
  /** DuckDB's rows per row group: ranges are made of whole row groups. */
  private static final long ROW_GROUP = DatasetDescriber.ROWS_PER_RANGE;
  /** The plan operators a splittable query may have. */
  private static final Set<String> SCAN_OPERATORS = Set.of("PROJECTION", "FILTER", "SEQ_SCAN", "TABLE_SCAN");
  private static final Pattern OPERATOR = Pattern.compile("\"name\"\\s*:\\s*\"([^\"]*)\"");

  private final DuckDBEngine engine;
  private final CancelSignal cancel;

  SplitScan(DuckDBEngine engine, CancelSignal cancel) {
    this.engine = engine;
    this.cancel = cancel;
  }

  /** The query's parts (at least two), or empty when it does not split: then nothing has run. */
  Optional<List<QueryResult>> run(QuerySpec spec, int parts, BufferAllocator allocator) {
    if (parts < 2 || spec.schemaOnly() || spec.hasParameterRows() || spec.inSessionTransaction()
        || !spec.parameters().isEmpty() || spec.dataset().isPresent() || !spec.namedDatasets().isEmpty()) {
      return Optional.empty();
    }
    List<DuckDBConnection> connections = new ArrayList<>();
    List<QueryResult> results = new ArrayList<>();
    try {
      connections.add(engine.newConnection());
      Optional<TableScan> scan = TableScan.of(connections.get(0), spec.sql());
      if (scan.isEmpty() || cancel.isCancelled()) {
        return Optional.empty();
      }
      for (int i = 1; i < parts; i++) {
        connections.add(engine.newConnection());
      }
      long rowIds = beginInOneSnapshot(connections, scan.get());
      long rowGroups = (rowIds + ROW_GROUP - 1) / ROW_GROUP;
      int used = (int) Math.min(parts, rowGroups);
      if (used < 2) {
        return Optional.empty();
      }
      for (int i = 0; i < used; i++) {
        long from = rowGroups * i / used * ROW_GROUP;
        long to = i == used - 1 ? -1 : rowGroups * (i + 1) / used * ROW_GROUP;
        DuckDBSession part = new DuckDBSession(engine, connections.get(i));
        connections.set(i, null);
        QuerySpec partSpec = new QuerySpec(scan.get().partition(from, to), Optional.empty(), spec.batchRows(),
            List.of(), false, TransactionMode.SESSION, spec.options(), new byte[0]);
        try {
          QueryResult result = part.executeHere(partSpec, allocator, cancel, false);
          results.add(result instanceof DuckDBResult rows ? rows.closing(part) : closing(result, part));
        } catch (RuntimeException e) {
          part.close();
          throw e;
        }
      }
      List<QueryResult> answer = List.copyOf(results);
      results.clear();
      return Optional.of(answer);
    } catch (NotOneSnapshot e) {
      return Optional.empty();
    } catch (SQLException | RuntimeException e) {
      if (cancel.isCancelled()) {
        throw ThallusException.of(StatusCode.CANCELLED, "the query was cancelled", e);
      }
      // A part that fails to bind (a column named by its schema, say) or to run: the query runs whole instead, and
      // the whole run reports any error of the query itself.
      return Optional.empty();
    } finally {
      results.forEach(QueryResult::close);
      connections.forEach(DuckDBEngine::closeQuietly);
    }
  }

  /**
   * Begins a read transaction on every connection and touches the table (DuckDB takes the snapshot then), all with
   * no commit in between; answers the table's rowid bound (max rowid + 1) in that snapshot.
   */
  private long beginInOneSnapshot(List<DuckDBConnection> connections, TableScan scan) throws SQLException {
    WriteWindow writes = engine.writes();
    long stamp = writes.quietStamp();
    if (stamp < 0) {
      throw new NotOneSnapshot();
    }
    long bound = 0;
    for (int i = 0; i < connections.size(); i++) {
      try (Statement statement = connections.get(i).createStatement()) {
        statement.execute("BEGIN TRANSACTION");
        String touch = i == 0 ? "SELECT coalesce(max(rowid) + 1, 0) FROM " + scan.table()
            : "SELECT 1 FROM " + scan.table() + " LIMIT 1";
        try (ResultSet rows = statement.executeQuery(touch)) {
          if (rows.next() && i == 0) {
            bound = rows.getLong(1);
          }
        }
      }
    }
    if (!writes.stillQuiet(stamp)) {
      throw new NotOneSnapshot();
    }
    return bound;
  }

  /** A statement-less answer (DuckDB said it is no query after all): closed with the session that ran it. */
  private static QueryResult closing(QueryResult result, DuckDBSession session) {
    session.close();
    return result;
  }

  /** A statement may have committed while the partitions' transactions began: they may see different data. */
  private static final class NotOneSnapshot extends RuntimeException {
    NotOneSnapshot() {
      super(null, null, false, false);
    }
  }

  /**
   * A query that is one SELECT of one base table, as DuckDB parses it ({@code json_serialize_sql}) and plans it
   * ({@code EXPLAIN}): where its table reference lies in the text (UTF-8 byte offsets, as DuckDB counts).
   */
  record TableScan(byte[] sql, int at, int length, String table, String alias) {
    static Optional<TableScan> of(DuckDBConnection connection, String sql) throws SQLException {
      String node = "j->'$.statements[0].node'";
      String from = node + "->'from_table'";
      String query = "SELECT json_array_length(j->'$.statements'), " + node + "->>'type', "
          + "json_array_length(" + node + "->'modifiers'), json_array_length(" + node + "->'cte_map'->'map'), "
          + "json_array_length(" + node + "->'group_expressions'), json_array_length(" + node + "->'group_sets'), "
          + node + "->>'aggregate_handling', " + node + "->'having', " + node + "->'sample', " + node + "->'qualify', "
          + from + "->>'type', " + from + "->'sample', " + from + "->'at_clause', "
          + "(" + from + "->>'query_location')::BIGINT, (" + from + "->>'query_location_length')::BIGINT, "
          + from + "->>'alias', " + from + "->>'table_name', " + from + "->'qualified_name'->'path', "
          + "j->>'error', json_array_length(" + from + "->'column_name_alias') "
          + "FROM (SELECT json_serialize_sql(" + DuckDBEngine.literal(sql) + ")::JSON AS j)";
      try (Statement statement = connection.createStatement(); ResultSet row = statement.executeQuery(query)) {
        if (!row.next() || !"false".equals(row.getString(19)) || row.getLong(1) != 1
            || !"SELECT_NODE".equals(row.getString(2)) || row.getLong(3) != 0 || row.getLong(4) != 0
            || row.getLong(5) != 0 || row.getLong(6) != 0 || !"STANDARD_HANDLING".equals(row.getString(7))
            || !isNull(row.getString(8)) || !isNull(row.getString(9)) || !isNull(row.getString(10))
            || !"BASE_TABLE".equals(row.getString(11)) || !isNull(row.getString(12))
            || !isNull(row.getString(13)) || row.getLong(20) != 0) {
          return Optional.empty();
        }
        long at = row.getLong(14);
        long length = row.getLong(15);
        byte[] text = sql.getBytes(StandardCharsets.UTF_8);
        if (at < 0 || length <= 0 || at + length > text.length) {
          return Optional.empty();
        }
        String alias = row.getString(16).isEmpty() ? row.getString(17) : row.getString(16);
        String table = qualified(statement, row.getString(18));
        if (table == null || hasRowIdColumn(statement, table) || !onlyScans(connection, sql)) {
          return Optional.empty();
        }
        return Optional.of(new TableScan(text, (int) at, (int) length, table, DuckDBSql.identifier(alias)));
      } catch (SQLException e) {
        // Not a statement DuckDB can parse or plan here: it runs whole, and that run says what is wrong.
        return Optional.empty();
      }
    }

    private static boolean isNull(String json) {
      return json == null || json.equals("null");
    }

    /** The path (a JSON list of names) as one quoted SQL name, or null. */
    private static String qualified(Statement statement, String path) throws SQLException {
      try (ResultSet names = statement.executeQuery("SELECT unnest(" + DuckDBEngine.literal(path)
          + "::JSON::VARCHAR[])")) {
        List<String> parts = new ArrayList<>();
        while (names.next()) {
          parts.add(DuckDBSql.identifier(names.getString(1)));
        }
        return parts.isEmpty() ? null : String.join(".", parts);
      }
    }

    /** Whether the table has a column of its own named rowid, which would hide DuckDB's row ids. */
    private static boolean hasRowIdColumn(Statement statement, String table) throws SQLException {
      try (ResultSet none = statement.executeQuery("SELECT * FROM " + table + " LIMIT 0")) {
        var columns = none.getMetaData();
        for (int i = 1; i <= columns.getColumnCount(); i++) {
          if (columns.getColumnName(i).equalsIgnoreCase("rowid")) {
            return true;
          }
        }
        return false;
      }
    }

    /** Whether DuckDB plans {@code sql} as a scan with only filters and projections above it. */
    private static boolean onlyScans(DuckDBConnection connection, String sql) throws SQLException {
      try (Statement statement = connection.createStatement();
           ResultSet plan = statement.executeQuery("EXPLAIN (FORMAT JSON) " + sql)) {
        boolean any = false;
        while (plan.next()) {
          Matcher operator = OPERATOR.matcher(plan.getString(2));
          while (operator.find()) {
            any = true;
            if (!SCAN_OPERATORS.contains(operator.group(1).trim())) {
              return false;
            }
          }
        }
        return any;
      }
    }

    /** The query over rowids [from, to) of its table ({@code to} -1: to the end). */
    String partition(long from, long to) {
      String range = "rowid >= " + from + (to < 0 ? "" : " AND rowid < " + to);
      byte[] replacement = ("(SELECT * FROM " + table + " WHERE " + range + ") AS " + alias)
          .getBytes(StandardCharsets.UTF_8);
      byte[] out = new byte[sql.length - length + replacement.length];
      System.arraycopy(sql, 0, out, 0, at);
      System.arraycopy(replacement, 0, out, at, replacement.length);
      System.arraycopy(sql, at + length, out, at + replacement.length, sql.length - at - length);
      return new String(out, StandardCharsets.UTF_8);
    }
  }
}
