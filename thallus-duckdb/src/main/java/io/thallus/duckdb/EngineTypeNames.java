package io.thallus.duckdb;

import io.thallus.QueryRequest;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.engine.QuerySpec;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A result schema with DuckDB's type name in the metadata ({@link QueryRequest#ENGINE_TYPE_KEY}) of each column whose
 * Arrow type does not tell which DuckDB type it was: HUGEINT and UHUGEINT (both decimal(38, 0)), UUID (text), BIT and
 * BIGNUM (their bytes), TIME WITH TIME ZONE (a time, or its text where {@link OffsetTimeText} turned it into text
 * to keep its offset). Only for a client that asked (the JDBC driver reads values as
 * DuckDB's own driver does); the columns of nested types are left as they are.
 */
final class EngineTypeNames {
  private static final Set<String> AMBIGUOUS = Set.of("HUGEINT", "UHUGEINT", "UUID", "BIT", "BIGNUM", "VARINT",
      "TIME WITH TIME ZONE");

  private EngineTypeNames() {}

  /** Whether the query's client asked for the names ({@link QueryRequest.Builder#engineTypeNames}). */
  static boolean asked(QuerySpec spec) {
    return spec.options().containsKey(QueryRequest.ENGINE_TYPE_NAMES_OPTION);
  }

  /** {@code offsetColumns}: the (0-based) columns that are TIME WITH TIME ZONE sent as text. */
  static Schema annotate(Schema schema, ResultSet result, Set<Integer> offsetColumns) {
    try {
      return annotated(schema, result.getMetaData(), offsetColumns);
    } catch (SQLException e) {
      throw ThallusException.of(StatusCode.INTERNAL, "DuckDB gave no column types: " + e.getMessage(), e);
    }
  }

  private static Schema annotated(Schema schema, ResultSetMetaData meta, Set<Integer> offsetColumns)
      throws SQLException {
    List<Field> fields = new ArrayList<>(schema.getFields().size());
    for (int i = 0; i < schema.getFields().size(); i++) {
      Field field = schema.getFields().get(i);
      String name = offsetColumns.contains(i) ? OffsetTimeText.TYPE
          : i < meta.getColumnCount() ? meta.getColumnTypeName(i + 1) : null;
      if (name != null && AMBIGUOUS.contains(name.toUpperCase(Locale.ROOT))) {
        Map<String, String> metadata = new HashMap<>(field.getMetadata());
        metadata.put(QueryRequest.ENGINE_TYPE_KEY, name.toUpperCase(Locale.ROOT));
        field = new Field(field.getName(), new FieldType(field.isNullable(), field.getType(), field.getDictionary(),
            metadata), field.getChildren());
      }
      fields.add(field);
    }
    return new Schema(fields, schema.getCustomMetadata());
  }
}
