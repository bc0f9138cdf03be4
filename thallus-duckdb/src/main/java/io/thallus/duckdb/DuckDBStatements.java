package io.thallus.duckdb;

import io.thallus.StatementDescription;
import io.thallus.StatementKind;
import java.sql.ParameterMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.duckdb.DuckDBConnection;
import org.duckdb.DuckDBResultSet;
import org.duckdb.DuckDBResultSetMetaData;

/**
 * What a statement is, as DuckDB itself says: the engine's one reader of SQL text. Nothing here looks at keywords.
 * <ul>
 *   <li>Its kind is the return type DuckDB's planner gives the prepared statement (its {@code StatementReturnType}:
 *       rows, changed rows, or nothing), the very property that decides what DuckDB's own driver answers: a result
 *       set, an update count, or neither. DuckDB's JDBC driver exposes no finer statement type.
 *   <li>Its placeholders are those DuckDB's parser found ({@code ?}, {@code $n}; never inside a string, a quoted
 *       name, a comment or a dollar-quoted string), with the types DuckDB's binder inferred for them.
 *   <li>Whether its rows can be planned without running it ({@code SELECT * FROM (...) LIMIT 0}): DuckDB decides,
 *       by planning the wrapped statement. Outside a transaction it is simply tried (a statement that is not
 *       SELECT-shaped, such as PRAGMA, EXPLAIN, CALL or ... RETURNING, fails to plan wrapped, at no cost). Inside
 *       one a failed plan would abort the transaction (DuckDB binds a wrapped PRAGMA as a table name), so DuckDB's
 *       parser is asked first whether it is SELECT-shaped ({@code json_serialize_sql} serializes exactly those; it
 *       costs a query, so only there).
 * </ul>
 * Preparing is DuckDB's parse, bind and plan, and runs nothing, except that DuckDB's driver runs every statement but
 * the last of a text that holds several.
 */
final class DuckDBStatements {
  private DuckDBStatements() {}

  /** The kind DuckDB's planner gave a prepared statement. */
  static StatementKind kind(PreparedStatement prepared) throws SQLException {
    ResultSetMetaData meta = prepared.getMetaData();
    return switch (((DuckDBResultSetMetaData) meta).getReturnType()) {
      case QUERY_RESULT -> StatementKind.QUERY;
      case CHANGED_ROWS -> StatementKind.UPDATE;
      case NOTHING -> StatementKind.COMMAND;
    };
  }

  /** The Arrow types of a prepared statement's placeholders, in order (see {@link DuckDBTypes#arrowType}). */
  static List<Field> parameters(PreparedStatement prepared) throws SQLException {
    ParameterMetaData meta = prepared.getParameterMetaData();
    List<Field> fields = new ArrayList<>();
    for (int i = 1; i <= meta.getParameterCount(); i++) {
      fields.add(new Field("parameter_" + i, FieldType.nullable(DuckDBTypes.arrowType(meta.getParameterTypeName(i))),
          null));
    }
    return fields;
  }

  /**
   * Whether {@code sql}, run outside a transaction, may stream rows that a write returns (INSERT, UPDATE or DELETE
   * ... RETURNING), whose autocommit then comes only when its result closes. Only a text that holds the word
   * RETURNING can; of those, one that DuckDB's parser reads as one SELECT cannot (a column of that name). A text
   * DuckDB's parser does not read as one SELECT (a write, PRAGMA, CALL, several statements) counts: a false yes
   * costs only a split refused while its result is open.
   */
  static boolean mayCommitWhenClosed(DuckDBConnection connection, String sql) throws SQLException {
    if (!sql.toLowerCase(java.util.Locale.ROOT).contains("returning") || DuckDBNatives.inTransaction(connection)) {
      return false;
    }
    return !DuckDBStatements.selectShaped(connection, sql);
  }

  /** Whether DuckDB's parser reads {@code sql} as one SELECT-shaped statement, which can be wrapped as a subquery. */
  static boolean selectShaped(DuckDBConnection connection, String sql) throws SQLException {
    try (PreparedStatement parse = connection.prepareStatement(
        // One statement, and a SELECT: a text of several cannot be taken as a subquery.
        "SELECT NOT coalesce(json_extract(j, '$.error')::BOOLEAN, true) AND json_array_length(j, '$.statements') = 1 "
            + "FROM (SELECT json_serialize_sql(?::VARCHAR) AS j)")) {
      parse.setString(1, sql);
      try (java.sql.ResultSet answer = parse.executeQuery()) {
        return answer.next() && answer.getBoolean(1);
      }
    }
  }

  /** A SELECT-shaped query as one that yields the same columns and no row: DuckDB plans LIMIT 0 without reading. */
  static String withoutRows(String sql) {
    return "SELECT * FROM (" + body(sql) + "\n) AS thallus_schema LIMIT 0";
  }

  /** A statement's text as a subquery takes it: without its trailing semicolons. */
  static String body(String sql) {
    String body = sql.strip();
    while (body.endsWith(";")) {
      body = body.substring(0, body.length() - 1).stripTrailing();
    }
    return body;
  }

  /**
   * Describes {@code sql} on {@code connection} without running it. A query's result schema is the one DuckDB's
   * Arrow export gives it, planned under LIMIT 0 (with every placeholder NULL); where that cannot be done safely it
   * is the schema its prepared columns' types map to ({@link DuckDBTypes#arrowType}): for a statement that is not
   * SELECT-shaped, and for one with placeholders inside an open transaction (a NULL that a function refuses would
   * fail the plan, and any failure aborts DuckDB's transaction: there DuckDB's parser is asked first whether the
   * wrap can work). Outside a transaction the wrapped plan is simply tried.
   */
  static StatementDescription describe(DuckDBConnection connection, String sql, BufferAllocator allocator,
      boolean inTransaction) throws SQLException {
    StatementKind kind;
    List<Field> parameters;
    List<Field> columns = new ArrayList<>();
    try (PreparedStatement prepared = connection.prepareStatement(sql)) {
      kind = kind(prepared);
      parameters = parameters(prepared);
      if (kind == StatementKind.QUERY) {
        ResultSetMetaData meta = prepared.getMetaData();
        for (int i = 1; i <= meta.getColumnCount(); i++) {
          columns.add(new Field(meta.getColumnName(i),
              FieldType.nullable(DuckDBTypes.arrowType(meta.getColumnTypeName(i))), null));
        }
      }
    }
    if (kind != StatementKind.QUERY) {
      return new StatementDescription(kind, parameters, new Schema(List.of()));
    }
    StatementDescription mapped = new StatementDescription(kind, parameters, new Schema(columns));
    if (inTransaction && (!parameters.isEmpty() || !selectShaped(connection, sql))) {
      return mapped;
    }
    try {
      return new StatementDescription(kind, parameters, plannedSchema(connection, sql, parameters.size(), allocator));
    } catch (SQLException e) {
      if (inTransaction) {
        throw e;
      }
      // Not SELECT-shaped (PRAGMA, EXPLAIN, ... RETURNING), or a NULL DuckDB refuses: outside a transaction the
      // attempt costs nothing, and the prepared columns' types say what they are.
      return mapped;
    }
  }

  /**
   * The Arrow schema DuckDB's export gives the rows of {@code sql} planned under LIMIT 0 with every placeholder NULL
   * (a statement without placeholders runs as a plain statement: DuckDB's driver then needs no prepared statement).
   */
  private static Schema plannedSchema(DuckDBConnection connection, String sql, int placeholders,
      BufferAllocator allocator) throws SQLException {
    try (Statement planned = placeholders == 0 ? connection.createStatement()
        : connection.prepareStatement(withoutRows(sql))) {
      java.sql.ResultSet result;
      if (placeholders == 0) {
        result = planned.executeQuery(withoutRows(sql));
      } else {
        PreparedStatement prepared = (PreparedStatement) planned;
        DuckDBEngine.bind(prepared, Collections.nCopies(placeholders, null));
        result = prepared.executeQuery();
      }
      // Arrow's import never meets a budget (see ImportedBatches); LIMIT 0 imports no batch, only the schema.
      ImportedBatches.Importing importing = ImportedBatches.open(allocator);
      try (DuckDBResultSet rows = (DuckDBResultSet) result;
           ArrowReader reader = (ArrowReader) rows.arrowExportStream(importing.allocator(), 1)) {
        return DuckDBResult.messageSchema(reader);
      } catch (java.io.IOException e) {
        throw new SQLException("reading the planned schema: " + e.getMessage(), e);
      } finally {
        importing.finish();
      }
    }
  }
}
