package io.thallus.flightsql;

import io.thallus.QueryRequest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.flight.sql.FlightSqlColumnMetadata;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A table's schema as Flight SQL clients read its columns from GetTables: the Arrow types of its rows, each field
 * nullable only where DuckDB's column is, and carrying DuckDB's type name, precision, scale, default and comment as
 * field metadata under the keys the clients read: Flight SQL's {@code ARROW:FLIGHT:SQL:*} (the JDBC driver's
 * {@code getColumns}) and ADBC's {@code XDBC_*} (its {@code get_objects}, which reads nullability only there).
 */
final class TableSchemas {
  private static final String COLUMNS = "SELECT column_name, data_type, is_nullable, numeric_precision,"
      + " numeric_scale, column_default, comment FROM duckdb_columns() WHERE database_name = ? AND schema_name = ?"
      + " AND table_name = ? ORDER BY column_index";

  private TableSchemas() {}

  /** The schema of the table {@code catalog.schema.table} (a name the catalog listed, so it exists as written). */
  static Schema of(FlightSession session, String catalog, String schema, String table) {
    Schema rows = session.call(client -> client.schema(QueryRequest.of("SELECT * FROM "
        + Metadata.tableName(catalog, schema, table))));
    Map<String, List<Object>> columns = new HashMap<>();
    for (List<Object> column : Metadata.rows(session, COLUMNS, List.of(catalog, schema, table))) {
      columns.put((String) column.get(0), column);
    }
    List<Field> fields = new ArrayList<>();
    for (Field field : rows.getFields()) {
      List<Object> column = columns.get(field.getName());
      fields.add(column == null ? field : described(field, column, catalog, schema, table));
    }
    return new Schema(fields, rows.getCustomMetadata());
  }

  private static Field described(Field field, List<Object> column, String catalog, String schema, String table) {
    String typeName = (String) column.get(1);
    boolean nullable = Boolean.TRUE.equals(column.get(2));
    FlightSqlColumnMetadata.Builder flightSql = new FlightSqlColumnMetadata.Builder().catalogName(catalog)
        .schemaName(schema).tableName(table).typeName(typeName);
    Map<String, String> metadata = new LinkedHashMap<>();
    metadata.put("XDBC_TYPE_NAME", typeName);
    metadata.put("XDBC_NULLABLE", nullable ? "1" : "0");
    metadata.put("XDBC_IS_NULLABLE", nullable ? "YES" : "NO");
    // A DECIMAL's digits. For other numbers DuckDB counts bits (radix 2); the clients size those from the Arrow type.
    if (typeName.startsWith("DECIMAL") && column.get(3) instanceof Number precision
        && column.get(4) instanceof Number scale) {
      flightSql.precision(precision.intValue()).scale(scale.intValue());
      metadata.put("XDBC_COLUMN_SIZE", Integer.toString(precision.intValue()));
      metadata.put("XDBC_DECIMAL_DIGITS", Integer.toString(scale.intValue()));
    }
    if (column.get(5) != null) {
      metadata.put("XDBC_COLUMN_DEF", column.get(5).toString());
    }
    if (column.get(6) != null) {
      flightSql.remarks(column.get(6).toString());
      metadata.put("REMARKS", column.get(6).toString());
    }
    metadata.putAll(flightSql.build().getMetadataMap());
    metadata.putAll(field.getMetadata());
    FieldType type = new FieldType(nullable, field.getType(), field.getDictionary(), metadata);
    return new Field(field.getName(), type, field.getChildren());
  }
}
