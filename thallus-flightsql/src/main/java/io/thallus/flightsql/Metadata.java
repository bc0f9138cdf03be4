package io.thallus.flightsql;

import com.google.protobuf.ByteString;
import io.thallus.QueryRequest;
import io.thallus.ThallusStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.channels.Channels;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.flight.sql.FlightSqlProducer.Schemas;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.UInt1Vector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.impl.UnionListWriter;
import org.apache.arrow.vector.ipc.WriteChannel;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Flight SQL's catalog commands answered from DuckDB's own catalog functions, in the caller's session (so its
 * temporary tables are listed), filters bound as parameters.
 */
final class Metadata {
  /** DuckDB's catalogs that hold its own functions and views, not the user's data. */
  private static final String USER_DATABASES = "database_name <> 'system'";

  /**
   * Every foreign key column as Flight SQL lists it: the referenced (primary key) side, the referencing side, its
   * place in the key, the names of both constraints, and the rules. DuckDB's foreign keys reference a table of their
   * own schema and take no ON UPDATE or ON DELETE action: both rules are JDBC's and Flight SQL's NO ACTION (3).
   */
  private static final String FOREIGN_KEYS = "SELECT * FROM (SELECT c.database_name AS pk_catalog_name,"
      + " c.schema_name AS pk_db_schema_name, c.referenced_table AS pk_table_name,"
      + " unnest(c.referenced_column_names) AS pk_column_name, c.database_name AS fk_catalog_name,"
      + " c.schema_name AS fk_db_schema_name, c.table_name AS fk_table_name,"
      + " unnest(c.constraint_column_names) AS fk_column_name,"
      + " unnest(range(1, len(c.constraint_column_names) + 1))::INTEGER AS key_sequence,"
      + " c.constraint_name AS fk_key_name,"
      + " (SELECT min(k.constraint_name) FROM duckdb_constraints() k WHERE k.database_name = c.database_name"
      + " AND k.schema_name = c.schema_name AND k.table_name = c.referenced_table"
      + " AND k.constraint_type IN ('PRIMARY KEY', 'UNIQUE')"
      + " AND k.constraint_column_names = c.referenced_column_names) AS pk_key_name,"
      + " 3 AS update_rule, 3 AS delete_rule"
      + " FROM duckdb_constraints() c WHERE c.constraint_type = 'FOREIGN KEY') WHERE TRUE";

  private Metadata() {}

  static String quote(String identifier) {
    return "\"" + identifier.replace("\"", "\"\"") + "\"";
  }

  /** A dotted, quoted table name from Flight SQL's optional catalog and schema. */
  static String tableName(String catalog, String schema, String table) {
    StringBuilder name = new StringBuilder();
    if (catalog != null && !catalog.isEmpty()) {
      name.append(quote(catalog)).append('.').append(quote(schema == null || schema.isEmpty() ? "main" : schema))
          .append('.');
    } else if (schema != null && !schema.isEmpty()) {
      name.append(quote(schema)).append('.');
    }
    return name.append(quote(table)).toString();
  }

  static boolean tableExists(FlightSession session, String table) {
    List<List<Object>> rows = rows(session, "SELECT count(*) FROM duckdb_tables() WHERE"
        + " (database_name || '.' || schema_name || '.' || table_name) = ? OR (schema_name || '.' || table_name) = ?"
        + " OR table_name = ?", List.of(unquoted(table), unquoted(table), unquoted(table)));
    return !rows.isEmpty() && ((Number) rows.get(0).get(0)).longValue() > 0;
  }

  private static String unquoted(String name) {
    StringBuilder plain = new StringBuilder();
    boolean quoted = false;
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (c == '"') {
        if (quoted && i + 1 < name.length() && name.charAt(i + 1) == '"') {
          plain.append('"');
          i++;
        } else {
          quoted = !quoted;
        }
      } else {
        plain.append(c);
      }
    }
    return plain.toString();
  }

  static List<List<Object>> rows(FlightSession session, String sql, List<Object> parameters) {
    List<List<Object>> rows = new ArrayList<>();
    try (ThallusStream stream = session.call(client -> client.query(QueryRequest.builder(sql).parameters(parameters).build()))) {
      while (stream.hasNext()) {
        try (VectorSchemaRoot batch = stream.next()) {
          for (int row = 0; row < batch.getRowCount(); row++) {
            List<Object> values = new ArrayList<>();
            for (FieldVector vector : batch.getFieldVectors()) {
              Object value = vector.getObject(row);
              values.add(value instanceof org.apache.arrow.vector.util.Text text ? text.toString() : value);
            }
            rows.add(values);
          }
        }
      }
    }
    return rows;
  }

  /**
   * Rows into a root of a Flight SQL schema (text, 32-bit and unsigned 8-bit integer, boolean, binary and list of
   * text columns).
   */
  static VectorSchemaRoot fill(Schema schema, List<List<Object>> rows, BufferAllocator allocator) {
    VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator);
    try {
      root.allocateNew();
      for (int row = 0; row < rows.size(); row++) {
        for (int column = 0; column < schema.getFields().size(); column++) {
          Object value = rows.get(row).get(column);
          FieldVector vector = root.getVector(column);
          if (value == null) {
            vector.setNull(row);
          } else if (vector instanceof VarCharVector text) {
            text.setSafe(row, value.toString().getBytes(StandardCharsets.UTF_8));
          } else if (vector instanceof IntVector number) {
            number.setSafe(row, ((Number) value).intValue());
          } else if (vector instanceof UInt1Vector number) {
            number.setSafe(row, ((Number) value).intValue());
          } else if (vector instanceof VarBinaryVector bytes) {
            bytes.setSafe(row, (byte[]) value);
          } else if (vector instanceof BitVector bit) {
            bit.setSafe(row, (Boolean) value ? 1 : 0);
          } else if (vector instanceof ListVector list) {
            texts(list, row, (List<?>) value);
          } else {
            throw new IllegalStateException("no metadata column of type " + vector.getField().getType());
          }
        }
      }
      root.setRowCount(rows.size());
      return root;
    } catch (RuntimeException e) {
      root.close();
      throw e;
    }
  }

  private static void texts(ListVector list, int row, List<?> values) {
    UnionListWriter writer = list.getWriter();
    writer.setPosition(row);
    writer.startList();
    for (Object value : values) {
      writer.writeVarChar(value.toString());
    }
    writer.endList();
  }

  static VectorSchemaRoot catalogs(FlightSession session) {
    return fill(Schemas.GET_CATALOGS_SCHEMA, rows(session, "SELECT database_name FROM duckdb_databases() WHERE "
        + USER_DATABASES + " ORDER BY 1", List.of()), session.allocator());
  }

  static VectorSchemaRoot schemas(FlightSession session, String catalog, String schemaPattern) {
    List<Object> parameters = new ArrayList<>();
    StringBuilder sql = new StringBuilder("SELECT database_name, schema_name FROM duckdb_schemas() WHERE "
        + USER_DATABASES + " AND schema_name NOT IN ('information_schema', 'pg_catalog')");
    filters(sql, parameters, catalog, schemaPattern, null);
    sql.append(" ORDER BY 1, 2");
    return fill(Schemas.GET_SCHEMAS_SCHEMA, rows(session, sql.toString(), parameters), session.allocator());
  }

  /**
   * Catalog, schema and table filters, matched as DuckDB resolves names: without regard to case (it cannot hold two
   * tables whose names differ only in case), so that a tool which upper-cases what it is typed finds the table
   * (sqlline does, as the Flight SQL JDBC driver says that identifiers are stored upper-case).
   */
  private static void filters(StringBuilder sql, List<Object> parameters, String catalog, String schemaPattern,
      String tablePattern) {
    if (catalog != null) {
      sql.append(" AND lower(database_name) = lower(?)");
      parameters.add(catalog);
    }
    if (schemaPattern != null) {
      sql.append(" AND schema_name ILIKE ? ESCAPE '\\'");
      parameters.add(schemaPattern);
    }
    if (tablePattern != null) {
      sql.append(" AND table_name ILIKE ? ESCAPE '\\'");
      parameters.add(tablePattern);
    }
  }

  /** A table named exactly (not a pattern), without regard to case, in the optional catalog and schema. */
  private static void named(StringBuilder sql, List<Object> parameters, String catalogColumn, String schemaColumn,
      String tableColumn, String catalog, String schema, String table) {
    sql.append(" AND lower(").append(tableColumn).append(") = lower(?)");
    parameters.add(table);
    if (catalog != null) {
      sql.append(" AND lower(").append(catalogColumn).append(") = lower(?)");
      parameters.add(catalog);
    }
    if (schema != null) {
      sql.append(" AND lower(").append(schemaColumn).append(") = lower(?)");
      parameters.add(schema);
    }
  }

  static VectorSchemaRoot tableTypes(FlightSession session) {
    return fill(Schemas.GET_TABLE_TYPES_SCHEMA, List.of(List.of("LOCAL TEMPORARY"), List.of("TABLE"),
        List.of("VIEW")), session.allocator());
  }

  static VectorSchemaRoot tables(FlightSession session, String catalog, String schemaPattern, String tablePattern,
      List<String> types, boolean includeSchema) {
    List<List<Object>> rows = tableRows(session, catalog, schemaPattern, tablePattern, types);
    if (includeSchema) {
      for (List<Object> row : rows) {
        Schema schema = TableSchemas.of(session, (String) row.get(0), (String) row.get(1), (String) row.get(2));
        row.add(serialize(schema).toByteArray());
      }
    }
    return fill(includeSchema ? Schemas.GET_TABLES_SCHEMA : Schemas.GET_TABLES_SCHEMA_NO_SCHEMA, rows,
        session.allocator());
  }

  /** The tables and views the filters match (null: any), each as catalog, schema, name and table type. */
  static List<List<Object>> tableRows(FlightSession session, String catalog, String schemaPattern,
      String tablePattern, List<String> types) {
    List<Object> parameters = new ArrayList<>();
    StringBuilder sql = new StringBuilder("SELECT * FROM (SELECT database_name, schema_name, table_name, CASE WHEN"
        + " temporary THEN 'LOCAL TEMPORARY' ELSE 'TABLE' END AS table_type FROM duckdb_tables() WHERE NOT internal"
        + " UNION ALL SELECT database_name, schema_name, view_name, CASE WHEN temporary THEN 'LOCAL TEMPORARY' ELSE"
        + " 'VIEW' END FROM duckdb_views() WHERE NOT internal) WHERE " + USER_DATABASES);
    filters(sql, parameters, catalog, schemaPattern, tablePattern);
    if (!types.isEmpty()) {
      sql.append(" AND table_type IN (").append(String.join(", ", java.util.Collections.nCopies(types.size(), "?")))
          .append(")");
      parameters.addAll(types);
    }
    sql.append(" ORDER BY table_type, database_name, schema_name, table_name");
    return rows(session, sql.toString(), parameters);
  }

  static VectorSchemaRoot primaryKeys(FlightSession session, String catalog, String schema, String table) {
    List<Object> parameters = new ArrayList<>();
    StringBuilder sql = new StringBuilder("SELECT database_name, schema_name, table_name, unnest(constraint_column_names)"
        + " AS column_name, unnest(range(1, len(constraint_column_names) + 1))::INTEGER AS key_sequence,"
        + " constraint_name FROM duckdb_constraints() WHERE constraint_type = 'PRIMARY KEY'");
    named(sql, parameters, "database_name", "schema_name", "table_name", catalog, schema, table);
    sql.append(" ORDER BY 1, 2, 3, 5");
    return fill(Schemas.GET_PRIMARY_KEYS_SCHEMA, rows(session, sql.toString(), parameters), session.allocator());
  }

  /**
   * The foreign keys between the optional referenced table {@code primary} and referencing table {@code foreign}
   * (each a catalog, schema and table; null for any), ordered as JDBC orders imported keys (by the referenced table)
   * or, when only the referenced table is named, exported keys (by the referencing table).
   */
  static VectorSchemaRoot foreignKeys(FlightSession session, TableRef primary, TableRef foreign) {
    List<Object> parameters = new ArrayList<>();
    StringBuilder sql = new StringBuilder(FOREIGN_KEYS);
    if (primary != null) {
      named(sql, parameters, "pk_catalog_name", "pk_db_schema_name", "pk_table_name", primary.catalog(),
          primary.schema(), primary.table());
    }
    if (foreign != null) {
      named(sql, parameters, "fk_catalog_name", "fk_db_schema_name", "fk_table_name", foreign.catalog(),
          foreign.schema(), foreign.table());
    }
    sql.append(foreign != null ? " ORDER BY pk_catalog_name, pk_db_schema_name, pk_table_name, key_sequence"
        : " ORDER BY fk_catalog_name, fk_db_schema_name, fk_table_name, key_sequence");
    return fill(Schemas.GET_IMPORTED_KEYS_SCHEMA, rows(session, sql.toString(), parameters), session.allocator());
  }

  /** A table a key command names: its catalog and schema optional (null), its name required. */
  record TableRef(String catalog, String schema, String table) {
    TableRef {
      if (table == null || table.isEmpty()) {
        throw new IllegalArgumentException("a key command names its table; this one names none");
      }
    }
  }

  static ByteString serialize(Schema schema) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try {
      MessageSerializer.serialize(new WriteChannel(Channels.newChannel(out)), schema);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    return ByteString.copyFrom(out.toByteArray());
  }
}
