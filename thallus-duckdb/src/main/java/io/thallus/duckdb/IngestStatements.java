package io.thallus.duckdb;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.IngestMode;
import io.thallus.engine.IngestSpec;
import io.thallus.internal.protocol.InsertStatements;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.duckdb.DuckDBConnection;

/**
 * The statement an ingest writes with, made after checking the table against the batches on the session's
 * connection: DuckDB's catalog says what the table is, DuckDB's binding of the batches' view what they are.
 */
final class IngestStatements {
  private final DuckDBConnection connection;

  IngestStatements(DuckDBConnection connection) {
    this.connection = connection;
  }

  /** The statement that writes the view's rows into the table, after checking the table against the batches. */
  String statement(IngestSpec spec, String view) throws SQLException {
    String statement = spec.insertStatement().orElse(null);
    if (statement != null) {
      // Rows of parameters for an INSERT ... VALUES (?, ...): inserted by position, cast as the INSERT casts.
      int columns = spec.schema().getFields().size();
      InsertStatements.Insert insert = InsertStatements.parse(statement)
          .filter(parsed -> parsed.placeholders() == columns && spec.mode() == IngestMode.APPEND)
          .orElseThrow(() -> ThallusException.of(StatusCode.INVALID_ARGUMENT, "an ingest of rows of parameters "
              + "needs an INSERT INTO t [(columns)] VALUES (?, ...) with one ? per column of the batches ("
              + columns + ") and mode append, not: " + statement));
      return insert.selectingFrom(view);
    }
    String table = spec.table();
    return switch (spec.mode()) {
      case CREATE -> {
        if (columnTypes(table) != null) {
          throw ThallusException.of(StatusCode.ALREADY_EXISTS, "table " + table + " exists already; ingest "
              + "with mode append to add rows to it, or replace to replace it");
        }
        yield "CREATE TABLE " + table + " AS SELECT * FROM " + view;
      }
      case REPLACE -> "CREATE OR REPLACE TABLE " + table + " AS SELECT * FROM " + view;
      case APPEND -> {
        Map<String, String> target = columnTypes(table);
        if (target == null) {
          throw ThallusException.of(StatusCode.NOT_FOUND, "table " + table + " does not exist; ingest with mode "
              + "create to create it from the batches' schema");
        }
        Map<String, String> incoming = incomingTypes(view);
        StringBuilder columns = new StringBuilder();
        for (Map.Entry<String, String> column : incoming.entrySet()) {
          String name = column.getKey();
          String want = target.get(name.toLowerCase(Locale.ROOT));
          if (want == null) {
            throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "column " + name + " of the batches is not a "
                + "column of table " + table + " (its columns: " + String.join(", ", target.keySet()) + ")");
          }
          if (!IngestTypes.fits(column.getValue(), want)) {
            throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "column " + name + " is " + column.getValue()
                + " in the batches but " + want + " in table " + table);
          }
          columns.append(columns.isEmpty() ? "" : ", ").append(DuckDBSql.identifier(name));
        }
        yield "INSERT INTO " + table + " (" + columns + ") SELECT " + columns + " FROM " + view;
      }
    };
  }

  /**
   * The batches' columns and their DuckDB types, as DuckDB binds the view over them (DESCRIBE only binds: it reads
   * no batch).
   */
  private Map<String, String> incomingTypes(String view) throws SQLException {
    Map<String, String> types = new LinkedHashMap<>();
    try (Statement describe = connection.createStatement();
         java.sql.ResultSet columns = describe.executeQuery("DESCRIBE " + view)) {
      while (columns.next()) {
        types.put(columns.getString("column_name"), columns.getString("column_type"));
      }
    }
    return types;
  }

  /**
   * A table's (or view's) columns and their DuckDB types, keyed by lower-case name (DuckDB's names match without
   * case); null when there is none. Looked up in DuckDB's catalog functions rather than by DESCRIBE, whose error
   * for a missing table would abort the session's transaction. The name resolves as DuckDB resolves it: one part in
   * the temporary schema, then the current schema; two parts as schema.table, then catalog.table.
   */
  private Map<String, String> columnTypes(String table) throws SQLException {
    List<String> parts = TableNames.parts(table);
    List<String[]> candidates = new ArrayList<>();
    switch (parts.size()) {
      case 1 -> {
        candidates.add(new String[] {"temp", "main", parts.get(0)});
        candidates.add(new String[] {null, null, parts.get(0)});
      }
      case 2 -> {
        candidates.add(new String[] {null, parts.get(0), parts.get(1)});
        candidates.add(new String[] {parts.get(0), "main", parts.get(1)});
      }
      default -> candidates.add(new String[] {parts.get(0), parts.get(1), parts.get(2)});
    }
    String sql = "SELECT column_name, data_type FROM duckdb_columns() WHERE lower(database_name) = "
        + "lower(coalesce(?, current_database())) AND lower(schema_name) = lower(coalesce(?, current_schema())) "
        + "AND lower(table_name) = lower(?) ORDER BY column_index";
    try (PreparedStatement lookup = connection.prepareStatement(sql)) {
      for (String[] candidate : candidates) {
        for (int i = 0; i < 3; i++) {
          lookup.setString(i + 1, candidate[i]);
        }
        Map<String, String> types = new LinkedHashMap<>();
        try (java.sql.ResultSet columns = lookup.executeQuery()) {
          while (columns.next()) {
            types.put(columns.getString(1).toLowerCase(Locale.ROOT), columns.getString(2));
          }
        }
        if (!types.isEmpty()) {
          return types;
        }
      }
    }
    return null;
  }
}
