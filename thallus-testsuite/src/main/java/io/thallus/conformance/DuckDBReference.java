package io.thallus.conformance;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.duckdb.DuckDBResultSet;

/** The same SQL run directly in a DuckDB of its own, read through DuckDB's Arrow export: the expected result. */
public final class DuckDBReference {
  private DuckDBReference() {}

  public static Collected run(String sql, int batchRows) {
    try (BufferAllocator allocator = new RootAllocator();
         Connection connection = DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = connection.createStatement();
         ResultSet resultSet = statement.executeQuery(sql);
         ArrowReader reader = (ArrowReader) ((DuckDBResultSet) resultSet).arrowExportStream(allocator, batchRows)) {
      List<List<Object>> rows = new ArrayList<>();
      int batches = 0;
      while (reader.loadNextBatch()) {
        Values.appendRows(reader.getVectorSchemaRoot(), reader, rows);
        batches++;
      }
      return new Collected(reader.getVectorSchemaRoot().getSchema(), rows, batches);
    } catch (SQLException | java.io.IOException e) {
      throw new AssertionError("reference query failed: " + e.getMessage(), e);
    }
  }

  /** One row of plain JDBC values, for aggregates used as checksums. */
  public static List<Object> row(String sql) {
    try (Connection connection = DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = connection.createStatement();
         ResultSet resultSet = statement.executeQuery(sql)) {
      if (!resultSet.next()) {
        throw new AssertionError("no row from " + sql);
      }
      List<Object> values = new ArrayList<>();
      for (int i = 1; i <= resultSet.getMetaData().getColumnCount(); i++) {
        values.add(resultSet.getObject(i));
      }
      return values;
    } catch (SQLException e) {
      throw new AssertionError("reference query failed: " + e.getMessage(), e);
    }
  }
}
