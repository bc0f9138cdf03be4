package io.thallus.duckdb;

import io.thallus.DatasetDescription;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.engine.CancelSignal;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.arrow.vector.util.DictionaryUtility;
import org.duckdb.DuckDBConnection;
import org.duckdb.DuckDBResultSet;

/**
 * Answers what a name is on one DuckDB connection (a session's, with its dataset bound): it finds the name in
 * DuckDB's catalog as the session's SQL would (temporary objects first, then the current schema), asks DuckDB for the
 * Arrow schema of {@code SELECT *} over exactly that object, and lists its parts: a table's rowid ranges of one
 * DuckDB row group each, or the files of the {@code dataset} view with their sizes and row counts (Parquet's from
 * the files' metadata, CSV's and JSON's by counting). A name that is not a table or view of the catalog is NOT_FOUND,
 * so no name reaches DuckDB's replacement scans (which would read a file of that name).
 */
final class DatasetDescriber {
  /** DuckDB's rows per row group: a table's row ranges are its row groups' rowid windows. */
  static final long ROWS_PER_RANGE = 122_880;
  /** What a variable-width value is counted as in a row range's estimated bytes (DuckDB's string header). */
  private static final int VARIABLE_WIDTH_BYTES = 16;

  private final DuckDBConnection connection;
  private final Path filesRoot;
  private final CancelSignal cancel;
  /** The most parts an answer lists: {@link DatasetDescription#MAX_PARTS}, less in tests of the limit. */
  private final int maxParts;

  DatasetDescriber(DuckDBConnection connection, Path filesRoot, CancelSignal cancel) {
    this(connection, filesRoot, cancel, DatasetDescription.MAX_PARTS);
  }

  DatasetDescriber(DuckDBConnection connection, Path filesRoot, CancelSignal cancel, int maxParts) {
    this.connection = connection;
    this.filesRoot = filesRoot;
    this.cancel = cancel;
    this.maxParts = maxParts;
  }

  /** {@code dataset}: the session's bound dataset, whose files the name {@code dataset} stands for. */
  DatasetDescription describe(String name, Optional<Path> dataset, BufferAllocator allocator) throws SQLException {
    List<String> parts = TableNames.parts(name);
    if (parts.size() == 1 && parts.get(0).equalsIgnoreCase("dataset") && dataset.isPresent()
        && !DuckDBEngine.isDatabaseFile(dataset.get())) {
      // The request's files, bound as the temporary view that comes first in the search path.
      Schema schema = schema("temp.main.dataset", allocator);
      return new DatasetDescription(DatasetDescription.Kind.FILES, schema, files(DatasetFiles.of(dataset.get())));
    }
    CatalogEntry entry = find(name, parts);
    Schema schema = schema(entry.sql(), allocator);
    if (entry.kind() == DatasetDescription.Kind.VIEW) {
      return new DatasetDescription(DatasetDescription.Kind.VIEW, schema, List.of());
    }
    return new DatasetDescription(DatasetDescription.Kind.TABLE, schema, rowRanges(entry.sql(), schema));
  }

  /** A table or view of the catalog, by its real database, schema and name. */
  private record CatalogEntry(DatasetDescription.Kind kind, String database, String schema, String name) {
    String sql() {
      return DuckDBSql.identifier(database) + "." + DuckDBSql.identifier(schema) + "."
          + DuckDBSql.identifier(name);
    }
  }

  /** The object {@code name} resolves to, in the order DuckDB's binder looks: temporary, current schema, main. */
  private CatalogEntry find(String name, List<String> parts) throws SQLException {
    String table = parts.get(parts.size() - 1);
    List<CatalogEntry> candidates = new ArrayList<>();
    String currentDatabase;
    String currentSchema;
    try (Statement statement = connection.createStatement();
         ResultSet current = statement.executeQuery("SELECT current_database(), current_schema()")) {
      current.next();
      currentDatabase = current.getString(1);
      currentSchema = current.getString(2);
    }
    try (PreparedStatement statement = connection.prepareStatement(
        "SELECT 'TABLE', database_name, schema_name, table_name FROM duckdb_tables() WHERE lower(table_name) = lower(?)"
            + " UNION ALL SELECT 'VIEW', database_name, schema_name, view_name FROM duckdb_views()"
            + " WHERE lower(view_name) = lower(?)")) {
      statement.setString(1, table);
      statement.setString(2, table);
      try (ResultSet rows = statement.executeQuery()) {
        while (rows.next()) {
          candidates.add(new CatalogEntry(DatasetDescription.Kind.valueOf(rows.getString(1)), rows.getString(2),
              rows.getString(3), rows.getString(4)));
        }
      }
    }
    List<String[]> order = new ArrayList<>();
    switch (parts.size()) {
      case 3 -> order.add(new String[] {parts.get(0), parts.get(1)});
      case 2 -> {
        order.add(new String[] {currentDatabase, parts.get(0)});
        order.add(new String[] {"temp", parts.get(0)});
        order.add(new String[] {"system", parts.get(0)});
        order.add(new String[] {parts.get(0), "main"});
      }
      default -> {
        order.add(new String[] {"temp", "main"});
        order.add(new String[] {currentDatabase, currentSchema});
        order.add(new String[] {currentDatabase, "main"});
        order.add(new String[] {"system", "main"});
      }
    }
    for (String[] place : order) {
      for (CatalogEntry candidate : candidates) {
        if (candidate.database().equalsIgnoreCase(place[0]) && candidate.schema().equalsIgnoreCase(place[1])) {
          return candidate;
        }
      }
    }
    throw ThallusException.of(StatusCode.NOT_FOUND, "no table or view named " + name);
  }

  /** The Arrow schema DuckDB gives {@code SELECT *} over {@code source}, dictionaries in their IPC form. */
  private Schema schema(String source, BufferAllocator allocator) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      DuckDBEngine.cancellable(statement, cancel, () -> statement.execute("SELECT * FROM " + source + " LIMIT 0"));
      try (DuckDBResultSet result = (DuckDBResultSet) statement.getResultSet();
           ArrowReader reader = (ArrowReader) result.arrowExportStream(allocator, 1)) {
        Schema inMemory = reader.getVectorSchemaRoot().getSchema();
        List<Field> fields = new ArrayList<>();
        for (Field field : inMemory.getFields()) {
          fields.add(DictionaryUtility.toMessageFormat(field, reader, new HashSet<>()));
        }
        return new Schema(fields, inMemory.getCustomMetadata());
      } catch (IOException e) {
        throw ThallusException.of(StatusCode.INTERNAL, "DuckDB gave no Arrow schema for " + source + ": "
            + e.getMessage(), e);
      }
    }
  }

  /** The table's rows by DuckDB row group: rowid windows of {@link #ROWS_PER_RANGE}, each with the rows it holds. */
  private List<DatasetDescription.Part> rowRanges(String table, Schema schema) throws SQLException {
    long rowBytes = rowBytes(schema);
    List<DatasetDescription.Part> ranges = new ArrayList<>();
    // GROUP BY 1, not an alias: DuckDB binds a GROUP BY name to the table's column of that name first.
    String sql = "SELECT rowid // " + ROWS_PER_RANGE + ", min(rowid), max(rowid), count(*) FROM " + table
        + " GROUP BY 1 ORDER BY 1 LIMIT " + (maxParts + 1);
    try (Statement statement = connection.createStatement()) {
      DuckDBEngine.cancellable(statement, cancel, () -> statement.execute(sql));
      try (ResultSet rows = statement.getResultSet()) {
        while (rows.next()) {
          if (ranges.size() == maxParts) {
            throw tooMany("table " + table, maxParts, "row ranges of " + ROWS_PER_RANGE + " rows");
          }
          long count = rows.getLong(4);
          ranges.add(new DatasetDescription.RowRange(rows.getLong(2), rows.getLong(3) + 1, count, count * rowBytes));
        }
      }
    }
    return ranges;
  }

  /** The bytes a row takes in Arrow, counting each variable-width value as {@link #VARIABLE_WIDTH_BYTES}. */
  static long rowBytes(Schema schema) {
    long bytes = 0;
    for (Field field : schema.getFields()) {
      ArrowType type = field.getType();
      bytes += switch (type) {
        case ArrowType.Int i -> i.getBitWidth() / 8;
        case ArrowType.FloatingPoint f -> switch (f.getPrecision()) {
          case HALF -> 2;
          case SINGLE -> 4;
          case DOUBLE -> 8;
        };
        case ArrowType.Bool b -> 1;
        case ArrowType.Date d -> d.getUnit() == org.apache.arrow.vector.types.DateUnit.DAY ? 4 : 8;
        case ArrowType.Time t -> t.getBitWidth() / 8;
        case ArrowType.Timestamp t -> 8;
        case ArrowType.Decimal d -> d.getBitWidth() / 8;
        case ArrowType.FixedSizeBinary f -> f.getByteWidth();
        case ArrowType.Interval i -> 16;
        case ArrowType.Duration d -> 8;
        default -> VARIABLE_WIDTH_BYTES;
      };
    }
    return Math.max(1, bytes);
  }

  /** The dataset's files in name order, each with its size, rows and (Parquet) row groups. */
  private List<DatasetDescription.Part> files(DatasetFiles files) throws SQLException {
    List<String> names = new ArrayList<>();
    try (Statement statement = connection.createStatement()) {
      DuckDBEngine.cancellable(statement, cancel, () -> statement.execute("SELECT file FROM glob("
          + DuckDBEngine.literal(files.glob()) + ") ORDER BY file LIMIT " + (maxParts + 1)));
      try (ResultSet rows = statement.getResultSet()) {
        while (rows.next()) {
          if (names.size() == maxParts) {
            throw tooMany("dataset " + files.glob(), maxParts, "files");
          }
          names.add(rows.getString(1));
        }
      }
    }
    Map<String, List<Long>> groups = new LinkedHashMap<>();
    Map<String, Long> rows = new LinkedHashMap<>();
    if (!names.isEmpty() && files.format() == DatasetFiles.Format.PARQUET) {
      readRowGroups(files, groups);
      groups.forEach((file, sizes) -> rows.put(file, sizes.stream().mapToLong(Long::longValue).sum()));
    } else if (!names.isEmpty()) {
      countRows(files, rows);
    }
    List<DatasetDescription.Part> parts = new ArrayList<>(names.size());
    for (String file : names) {
      parts.add(new DatasetDescription.FilePart(file, size(file), rows.getOrDefault(file, 0L),
          groups.getOrDefault(file, List.of())));
    }
    return parts;
  }

  private void readRowGroups(DatasetFiles files, Map<String, List<Long>> groups) throws SQLException {
    String sql = "SELECT file_name, row_group_id, any_value(row_group_num_rows) FROM parquet_metadata("
        + DuckDBEngine.literal(files.glob()) + ") GROUP BY ALL ORDER BY ALL LIMIT "
        + (DatasetDescription.MAX_ROW_GROUPS + 1);
    int count = 0;
    try (Statement statement = connection.createStatement()) {
      DuckDBEngine.cancellable(statement, cancel, () -> statement.execute(sql));
      try (ResultSet rows = statement.getResultSet()) {
        while (rows.next()) {
          if (++count > DatasetDescription.MAX_ROW_GROUPS) {
            throw tooMany("dataset " + files.glob(), DatasetDescription.MAX_ROW_GROUPS, "Parquet row groups");
          }
          groups.computeIfAbsent(rows.getString(1), f -> new ArrayList<>()).add(rows.getLong(3));
        }
      }
    }
  }

  /** CSV and JSON say nothing of their rows: each file's are counted, in one scan over all of them. */
  private void countRows(DatasetFiles files, Map<String, Long> counts) throws SQLException {
    String sql = "SELECT filename, count(*) FROM " + files.format().reader() + "("
        + DuckDBEngine.literal(files.glob()) + ", filename = true) GROUP BY ALL";
    try (Statement statement = connection.createStatement()) {
      DuckDBEngine.cancellable(statement, cancel, () -> statement.execute(sql));
      try (ResultSet rows = statement.getResultSet()) {
        while (rows.next()) {
          counts.put(rows.getString(1), rows.getLong(2));
        }
      }
    }
  }

  /**
   * The file's size, once it is known to lie under the data root: a symbolic link inside the root that points out
   * of it is refused, as DuckDB refuses to read it.
   */
  private long size(String file) {
    try {
      Path real = Path.of(file).toRealPath();
      if (filesRoot == null || !real.startsWith(filesRoot)) {
        throw ThallusException.of(StatusCode.PERMISSION_DENIED, "file " + file + " of the dataset leads outside "
            + "the data root");
      }
      return Files.size(real);
    } catch (IOException e) {
      throw ThallusException.of(StatusCode.NOT_FOUND, "file " + file + " of the dataset cannot be read: "
          + e.getMessage(), e);
    }
  }

  private static ThallusException tooMany(String what, int limit, String parts) {
    return ThallusException.of(StatusCode.OUT_OF_RANGE, what + " has more than " + String.format(Locale.ROOT,
        "%,d", limit) + " " + parts + ", more than one description answers; describe a "
        + "narrower glob or read it whole");
  }
}
