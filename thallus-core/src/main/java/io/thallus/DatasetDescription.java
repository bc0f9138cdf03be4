package io.thallus;

import java.util.List;
import java.util.Objects;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * What the server says a name is ({@link ThallusClient#describe(String)}): its {@link Kind}, the Arrow schema a
 * {@code SELECT *} of it answers, and its parts, so that a reader can split it without parsing SQL:
 *
 * <ul>
 *   <li>{@link Kind#FILES} (a request's {@code dataset} of files, named {@code dataset}): one {@link FilePart} per
 *       file, with its size and rows (and, for Parquet, the rows of each row group);
 *   <li>{@link Kind#TABLE}: {@link RowRange}s of DuckDB's {@code rowid}, ascending and disjoint, each with its rows
 *       and an estimate of its bytes; an empty table has none;
 *   <li>{@link Kind#VIEW}: no parts (a view is read whole, or split by the reader's own rule).
 * </ul>
 *
 * An answer holds at most {@link #MAX_PARTS} parts: the server refuses to describe more (OUT_OF_RANGE).
 */
public record DatasetDescription(Kind kind, Schema schema, List<Part> parts) {
  /** The most parts one answer holds; a dataset of more files, or a table of more row ranges, is refused. */
  public static final int MAX_PARTS = 100_000;
  /** The most Parquet row groups one answer lists over all its files. */
  public static final int MAX_ROW_GROUPS = 1_000_000;

  /** What a name is. The wire values never change. */
  public enum Kind {
    TABLE(0),
    VIEW(1),
    FILES(2);

    private final int wireValue;

    Kind(int wireValue) {
      this.wireValue = wireValue;
    }

    public int wireValue() {
      return wireValue;
    }

    /** The kind for a wire value, or null for one this version does not know. */
    public static Kind fromWireValue(int value) {
      for (Kind kind : values()) {
        if (kind.wireValue == value) {
          return kind;
        }
      }
      return null;
    }
  }

  /** One independently readable piece of a dataset or table. */
  public sealed interface Part permits FilePart, RowRange {
    /** Rows in this part. */
    long rows();

    /** Its size in bytes: the file's size for a file, an estimate from the column types for a row range. */
    long bytes();
  }

  /**
   * A file of a {@link Kind#FILES} dataset: {@code path} as the server's SQL reads it (a file under its data root),
   * its size in bytes on the server's file system, its rows, and for a Parquet file the rows of each row group in
   * file order (empty for CSV and JSON, which have none).
   */
  public record FilePart(String path, long bytes, long rows, List<Long> rowGroupRows) implements Part {
    public FilePart {
      Objects.requireNonNull(path, "path");
      rowGroupRows = List.copyOf(rowGroupRows);
      if (bytes < 0 || rows < 0) {
        throw new IllegalArgumentException("file " + path + " has negative bytes or rows");
      }
      long sum = 0;
      for (long groupRows : rowGroupRows) {
        if (groupRows < 0) {
          throw new IllegalArgumentException("file " + path + " has a row group of negative rows");
        }
        sum += groupRows;
      }
      if (!rowGroupRows.isEmpty() && sum != rows) {
        throw new IllegalArgumentException("file " + path + " has " + rows + " rows, its row groups " + sum);
      }
    }
  }

  /**
   * Rows of a {@link Kind#TABLE} whose {@code rowid} lies in [{@code firstRowId}, {@code endRowId}): {@code rows}
   * of them (fewer than the range is wide where rows were deleted), about {@code bytes} bytes.
   */
  public record RowRange(long firstRowId, long endRowId, long rows, long bytes) implements Part {
    public RowRange {
      if (firstRowId < 0 || endRowId < firstRowId || rows < 0 || rows > endRowId - firstRowId || bytes < 0) {
        throw new IllegalArgumentException("not a row range: rowid [" + firstRowId + ", " + endRowId + ") with "
            + rows + " rows, " + bytes + " bytes");
      }
    }
  }

  public DatasetDescription {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(schema, "schema");
    parts = List.copyOf(parts);
    if (parts.size() > MAX_PARTS) {
      throw new IllegalArgumentException(parts.size() + " parts are over the maximum of " + MAX_PARTS);
    }
    Class<? extends Part> expected = switch (kind) {
      case TABLE -> RowRange.class;
      case FILES -> FilePart.class;
      case VIEW -> null;
    };
    long rowGroups = 0;
    long lastEnd = 0;
    for (Part part : parts) {
      if (expected == null || !expected.isInstance(part)) {
        throw new IllegalArgumentException("a " + kind + " has no part of type " + part.getClass().getSimpleName());
      }
      if (part instanceof FilePart file) {
        rowGroups += file.rowGroupRows().size();
      }
      if (part instanceof RowRange range) {
        if (range.firstRowId() < lastEnd) {
          throw new IllegalArgumentException("row ranges overlap or are out of order at rowid " + range.firstRowId());
        }
        lastEnd = range.endRowId();
      }
    }
    if (rowGroups > MAX_ROW_GROUPS) {
      throw new IllegalArgumentException(rowGroups + " row groups are over the maximum of " + MAX_ROW_GROUPS);
    }
  }

  /** Rows of all parts together (0 for a view, whose rows are not counted). */
  public long rows() {
    return parts.stream().mapToLong(Part::rows).sum();
  }
}
