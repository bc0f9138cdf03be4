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

  /** "table", "view" or null: what {@code table} names in the server's database. */
  static String kind(ThallusClient client, TableName table) {
    String where = " WHERE " + table.schemaCondition() + " AND ";
    List<List<String>> rows = rows(client, "SELECT 'table' FROM duckdb_tables()" + where + "table_name = "
        + Sql.string(table.table()) + " UNION ALL SELECT 'view' FROM duckdb_views()" + where + "view_name = "
        + Sql.string(table.table()));
    return rows.isEmpty() ? null : rows.get(0).get(0);
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
