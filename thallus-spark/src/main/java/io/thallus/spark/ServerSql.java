package io.thallus.spark;

import io.thallus.QueryRequest;
import io.thallus.ThallusClient;
import io.thallus.ThallusStream;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/** Small statements the connector runs on a server for itself: DDL, the commit of a write, catalog lookups. */
final class ServerSql {
  private ServerSql() {}

  /** Runs {@code sql} to its end; inside the session's transaction (begun if none is open) when asked. */
  static void execute(ThallusClient client, String sql, boolean inTransaction) {
    QueryRequest.Builder request = QueryRequest.builder(sql);
    if (inTransaction) {
      request.autoCommit(false);
    }
    try (ThallusStream stream = client.query(request.build())) {
      while (stream.hasNext()) {
        stream.next().close();
      }
    }
  }

  /** "table", "view" or null: what {@code table} names in the server's database, each part matched exactly. */
  static String kind(ThallusClient client, TableName table) {
    Relation relation = find(client, table, true);
    return relation == null ? null : relation.kind();
  }

  /** A table or view of the server's database: its kind ("table" or "view") and its name as DuckDB spells it. */
  record Relation(String kind, TableName name) {}

  /**
   * The table or view {@code table} names, or null. With {@code caseSensitive} (Spark's
   * {@code spark.sql.caseSensitive}) each part must match exactly; without, as Spark's catalogs resolve names by
   * default and DuckDB its own, case is ignored: an exact match wins, and names that differ only in case are an
   * error naming them. The result spells the parts {@code table} gives as DuckDB does and leaves out those it does
   * not give (the current database and schema).
   */
  static Relation find(ThallusClient client, TableName table, boolean caseSensitive) {
    String sql = "SELECT kind, database_name, schema_name, name FROM (SELECT 'table' AS kind, database_name, "
        + "schema_name, table_name AS name FROM duckdb_tables() UNION ALL SELECT 'view', database_name, schema_name, "
        + "view_name FROM duckdb_views()) WHERE " + table.schemaCondition(caseSensitive) + " AND "
        + TableName.matches("name", table.table(), caseSensitive) + " ORDER BY ALL";
    List<List<String>> rows = rows(client, sql);
    if (rows.isEmpty()) {
      return null;
    }
    List<String> chosen = rows.get(0);
    if (rows.size() > 1) {
      List<List<String>> exact = rows.stream().filter(r -> r.get(3).equals(table.table())
          && (table.schemaOrNull() == null || r.get(2).equals(table.schemaOrNull()))
          && (table.catalogOrNull() == null || r.get(1).equals(table.catalogOrNull()))).toList();
      if (exact.size() != 1) {
        throw new IllegalArgumentException("'" + table + "' names " + rows.size() + " relations that differ only in "
            + "case: " + rows.stream().map(r -> TableName.of(r.get(1), r.get(2), r.get(3)).toString()).toList()
            + "; name one exactly with spark.sql.caseSensitive=true");
      }
      chosen = exact.get(0);
    }
    return new Relation(chosen.get(0), new TableName(table.catalogOrNull() == null ? null : chosen.get(1),
        table.schemaOrNull() == null ? null : chosen.get(2), chosen.get(3)));
  }

  /**
   * DuckDB's estimate of the rows {@code sql} returns, from the root of its plan ({@code EXPLAIN (FORMAT JSON)}),
   * or empty where the server gives none (an error is no reason to fail a query's planning).
   */
  static java.util.OptionalLong estimatedRows(ReadConf conf, String sql) {
    try (ThallusClient client = Connector.connect(conf, 0)) {
      for (List<String> row : rows(client, Connector.request(conf, "EXPLAIN (FORMAT JSON) " + sql))) {
        if ("physical_plan".equals(row.get(0)) && row.get(1) != null) {
          com.fasterxml.jackson.databind.JsonNode node = new com.fasterxml.jackson.databind.ObjectMapper()
              .readTree(row.get(1)).path(0);
          // The root's estimate, or the nearest one below it (a LIMIT or projection may carry none).
          while (!node.isMissingNode()) {
            String estimate = node.path("extra_info").path("Estimated Cardinality").asText("");
            if (!estimate.isEmpty()) {
              return java.util.OptionalLong.of(Long.parseLong(estimate.strip()));
            }
            node = node.path("children").path(0);
          }
        }
      }
    } catch (RuntimeException | com.fasterxml.jackson.core.JsonProcessingException e) {
      // fall through: no estimate
    }
    return java.util.OptionalLong.empty();
  }

  /** The rows of a small query, each value as text (null stays null). */
  static List<List<String>> rows(ThallusClient client, String sql) {
    return rows(client, QueryRequest.builder(sql).build());
  }

  static List<List<String>> rows(ThallusClient client, QueryRequest request) {
    List<List<String>> rows = new ArrayList<>();
    try (ThallusStream stream = client.query(request)) {
      while (stream.hasNext()) {
        try (VectorSchemaRoot batch = stream.next()) {
          for (int row = 0; row < batch.getRowCount(); row++) {
            List<String> values = new ArrayList<>();
            for (FieldVector vector : batch.getFieldVectors()) {
              Object value = vector.getObject(row);
              values.add(value == null ? null : value.toString());
            }
            rows.add(values);
          }
        }
      }
    }
    return rows;
  }
}
