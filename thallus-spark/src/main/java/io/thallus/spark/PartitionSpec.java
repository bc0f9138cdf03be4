package io.thallus.spark;

import java.io.Serializable;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.stream.Collectors;

/**
 * Which rows of the scan one partition reads. The partitions of one scan are built so that every row falls in
 * exactly one of them: hash buckets are disjoint and cover [0, n); row-id ranges are adjacent half-open intervals
 * from minus to plus infinity; Parquet row-group ranges tile each file.
 */
sealed interface PartitionSpec extends Serializable {

  /** The base query this partition reads (a row-id range narrows the table itself). */
  default String base(String base) {
    return base;
  }

  /** The rows of {@code table} this partition reads, as SQL: the whole table unless a rowid range narrows it. */
  default String rowsOf(String table) {
    return "SELECT * FROM " + TableName.parse(table).sql();
  }

  /** A predicate over the scan's cast columns, added to WHERE. */
  default Optional<String> predicate(List<TypeMapping.Column> columns) {
    return Optional.empty();
  }

  /** SQL that shadows the {@code dataset} view with this partition's part of it. */
  default Optional<String> datasetCte() {
    return Optional.empty();
  }

  /** A short description for EXPLAIN. */
  String describe();

  /** How the scan this partition belongs to is split, for EXPLAIN: the same for every partition of one scan. */
  String split();

  /** The whole scan. */
  record Whole() implements PartitionSpec {
    @Override
    public String describe() {
      return "whole";
    }

    @Override
    public String split() {
      return "none";
    }
  }

  /**
   * Bucket {@code bucket} of {@code buckets} by DuckDB's hash of the key columns (all columns when none are named).
   * DuckDB's {@code hash} is a UBIGINT, so {@code hash % n} lies in [0, n) and names exactly one bucket per row.
   */
  record Hash(int bucket, int buckets, List<String> keys) implements PartitionSpec {
    @Override
    public Optional<String> predicate(List<TypeMapping.Column> columns) {
      List<String> names = keys.isEmpty() ? columns.stream().map(TypeMapping.Column::name).toList() : keys;
      String hashed = names.stream().map(Sql::identifier).collect(Collectors.joining(", "));
      return Optional.of("hash(" + hashed + ") % " + buckets + " = " + bucket);
    }

    @Override
    public String describe() {
      return "hash(" + (keys.isEmpty() ? "row" : String.join(", ", keys)) + ") % " + buckets + " = " + bucket;
    }

    @Override
    public String split() {
      return "hash(" + (keys.isEmpty() ? "row" : String.join(", ", keys)) + ")";
    }
  }

  /** Rows of a table whose DuckDB {@code rowid} lies in [from, to); an absent bound is unbounded. */
  record RowIdRange(String table, OptionalLong from, OptionalLong to) implements PartitionSpec {
    @Override
    public String base(String base) {
      // The table as the read names it (t, s.t, "My Schema".t), so a qualified name is not quoted a second time.
      StringBuilder sql = new StringBuilder("SELECT * FROM ").append(TableName.parse(table).sql());
      String lower = from.isPresent() ? "rowid >= " + from.getAsLong() : null;
      String upper = to.isPresent() ? "rowid < " + to.getAsLong() : null;
      if (lower != null || upper != null) {
        sql.append(" WHERE ").append(lower != null && upper != null ? lower + " AND " + upper
            : lower != null ? lower : upper);
      }
      return sql.toString();
    }

    @Override
    public String rowsOf(String ignored) {
      return base(null);
    }

    @Override
    public String describe() {
      return "rowid in [" + (from.isPresent() ? from.getAsLong() : "-inf") + ", "
          + (to.isPresent() ? to.getAsLong() : "+inf") + ")";
    }

    @Override
    public String split() {
      return "rowid ranges";
    }
  }

  /** Row ranges [first, end) of Parquet files, tiling them along row-group boundaries. */
  record FileRanges(List<FileRange> ranges) implements PartitionSpec {
    @Override
    public Optional<String> datasetCte() {
      return Optional.of(ranges.stream()
          .map(r -> "SELECT * EXCLUDE (file_row_number) FROM read_parquet(" + Sql.string(r.file())
              + ", file_row_number = true) WHERE file_row_number >= " + r.first() + " AND file_row_number < "
              + r.end())
          .collect(Collectors.joining("\n  UNION ALL ")));
    }

    @Override
    public String describe() {
      return ranges.size() + " file range(s)";
    }

    @Override
    public String split() {
      return "Parquet row groups";
    }
  }

  record FileRange(String file, long first, long end) implements Serializable {}
}
