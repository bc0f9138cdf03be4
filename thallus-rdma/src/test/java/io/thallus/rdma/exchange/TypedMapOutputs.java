package io.thallus.rdma.exchange;

import io.thallus.conformance.Collected;
import io.thallus.conformance.DuckDBReference;
import io.thallus.conformance.TypeTable;
import io.thallus.conformance.Values;
import io.thallus.exchange.EndpointAddress;
import io.thallus.exchange.ExchangeEndpoint;
import io.thallus.exchange.MapOutput;
import io.thallus.exchange.PartitionReader;
import java.io.IOException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.duckdb.DuckDBResultSet;

/**
 * Map outputs of several Arrow types made by DuckDB, and what a reducer must read of them: map {@code m} owns the
 * rows {@code [m * rowsPerMap, (m + 1) * rowsPerMap)} of the conformance suite's type table, row {@code i} goes to
 * partition {@code i % partitions}, and each partition's rows come in DuckDB's batches of {@code batchRows}. The
 * expected rows are the same query run in a DuckDB of its own, so the exchange is compared with DuckDB, not with
 * itself. The columns are the type table's that a map output carries (no dictionaries: the exchange takes plain
 * batches).
 */
final class TypedMapOutputs {
  /** Fixed and variable width, decimals, temporal, nested, each NULL on some rows. */
  private static final Set<String> COLUMNS = Set.of("c_boolean", "c_integer", "c_bigint", "c_double",
      "c_decimal_18_3", "c_decimal_38_10", "c_varchar", "c_blob", "c_date", "c_timestamp", "c_list", "c_struct");
  private static final Comparator<List<Object>> ROW_ID = Comparator.comparingLong(row -> (Long) row.get(0));

  private TypedMapOutputs() {}

  /** Rows {@code [from, to)} of partition {@code partition}, ordered by row id. */
  static String sql(long from, long to, int partition, int partitions) {
    String columns = TypeTable.COLUMNS.stream().filter(c -> COLUMNS.contains(c.name()))
        .map(c -> "CASE WHEN i % 5 = 3 THEN NULL ELSE " + c.expression() + " END AS " + c.name())
        .collect(Collectors.joining(", "));
    return "SELECT i AS row_id, " + columns + " FROM range(" + from + ", " + to + ") t(i) WHERE i % " + partitions
        + " = " + partition + " ORDER BY i";
  }

  /**
   * Writes map {@code map} of {@code shuffle}: every partition's rows, in batches of {@code batchRows}, pushing each
   * partition to its entry of {@code pushTargets} (null: none). Answers the bytes per partition.
   */
  static long[] write(ExchangeEndpoint endpoint, BufferAllocator allocator, int shuffle, int map, int partitions,
      long rowsPerMap, int batchRows, List<EndpointAddress> pushTargets) {
    long from = map * rowsPerMap;
    MapOutput output = null;
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:")) {
      for (int partition = 0; partition < partitions; partition++) {
        try (Statement statement = duckdb.createStatement();
             ResultSet result = statement.executeQuery(sql(from, from + rowsPerMap, partition, partitions));
             ArrowReader batches = (ArrowReader) ((DuckDBResultSet) result).arrowExportStream(allocator, batchRows)) {
          VectorSchemaRoot root = batches.getVectorSchemaRoot();
          if (output == null) {
            output = endpoint.open(shuffle, map, root.getSchema(), partitions, pushTargets);
          }
          while (batches.loadNextBatch()) {
            output.add(partition, root);
          }
        }
      }
      return output.commit();
    } catch (SQLException | IOException e) {
      throw new AssertionError("map " + map + ": DuckDB failed: " + e.getMessage(), e);
    } finally {
      if (output != null) {
        output.close();
      }
    }
  }

  /** What a reducer of {@code partition} must read of maps {@code maps}, ordered by row id. */
  static List<List<Object>> expected(int partition, int partitions, List<Integer> maps, long rowsPerMap) {
    List<List<Object>> rows = new ArrayList<>();
    for (int map : maps) {
      Collected collected = DuckDBReference.run(sql(map * rowsPerMap, (map + 1) * rowsPerMap, partition, partitions),
          4096);
      rows.addAll(collected.rows());
    }
    rows.sort(ROW_ID);
    return rows;
  }

  /** Every row the reader answers, as plain values, ordered by row id (maps may come in any order). */
  static List<List<Object>> readAll(PartitionReader reader) {
    List<List<Object>> rows = new ArrayList<>();
    DictionaryProvider none = new DictionaryProvider.MapDictionaryProvider();
    for (VectorSchemaRoot batch = reader.next(); batch != null; batch = reader.next()) {
      Values.appendRows(batch, none, rows);
    }
    rows.sort(ROW_ID);
    return rows;
  }
}
