package io.thallus.duckdb;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Field;
import org.duckdb.DuckDBResultSet;
import org.junit.jupiter.api.Test;

/** DuckDB's type names read in one place: each maps to the Arrow type DuckDB's own Arrow export gives it. */
class DuckDBTypesTest {
  @Test
  void aDecimalsPrecisionAndScaleAreReadWithOrWithoutSpaces() {
    assertThat(DuckDBTypes.decimal("DECIMAL(12,3)")).contains(new DuckDBTypes.Decimal(12, 3));
    assertThat(DuckDBTypes.decimal("decimal(4, 1)")).contains(new DuckDBTypes.Decimal(4, 1));
    assertThat(DuckDBTypes.decimal("DOUBLE")).isEmpty();
    assertThat(IngestTypes.fits("DECIMAL(10,2)", "DECIMAL(12,3)")).isTrue();
    assertThat(IngestTypes.fits("DECIMAL(10,3)", "DECIMAL(12,2)")).isFalse();
    assertThat(IngestTypes.fits("INTEGER", "DECIMAL(12,2)")).isTrue();
  }

  @Test
  void eachScalarTypeMapsAsDuckDBsArrowExportHasIt() throws Exception {
    List<String> types = List.of("BOOLEAN", "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT",
        "UINTEGER", "UBIGINT", "HUGEINT", "FLOAT", "DOUBLE", "DECIMAL(4,1)", "DECIMAL(18,3)", "DECIMAL(38,10)",
        "DATE", "TIME", "TIMESTAMP", "TIMESTAMP_S", "TIMESTAMP_MS", "TIMESTAMP_NS", "TIMESTAMP WITH TIME ZONE",
        "BLOB", "VARCHAR");
    StringBuilder sql = new StringBuilder("SELECT ");
    for (int i = 0; i < types.size(); i++) {
      sql.append(i == 0 ? "" : ", ").append("NULL::").append(types.get(i)).append(" AS c").append(i);
    }
    try (BufferAllocator allocator = new RootAllocator();
         Connection connection = DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = connection.createStatement();
         ResultSet rows = statement.executeQuery(sql.toString());
         ArrowReader reader = (ArrowReader) ((DuckDBResultSet) rows).arrowExportStream(allocator, 16)) {
      List<Field> exported = reader.getVectorSchemaRoot().getSchema().getFields();
      for (int i = 0; i < types.size(); i++) {
        org.apache.arrow.vector.types.pojo.ArrowType expected = exported.get(i).getType();
        if (expected instanceof org.apache.arrow.vector.types.pojo.ArrowType.Timestamp zoned
            && zoned.getTimezone() != null) {
          // The export names the session's time zone; a placeholder's instant does not depend on it (UTC here).
          expected = new org.apache.arrow.vector.types.pojo.ArrowType.Timestamp(zoned.getUnit(), "UTC");
        }
        assertThat(DuckDBTypes.arrowType(types.get(i))).as(types.get(i)).isEqualTo(expected);
      }
    }
  }
}
