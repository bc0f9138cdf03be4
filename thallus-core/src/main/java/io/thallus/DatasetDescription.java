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
 *   <li>{@link Kind#VIEW}: no parts (a view is read whole, or split by the reader's own rule);
 *   <li>{@link Kind#SHARD} (a sharded dataset the server declares, docs/sharding.md): one {@link ShardPart} per part
 *       of it the server holds, with its id, checksum, size and rows.
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
    FILES(2),
    SHARD(3);

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
  public sealed interface Part permits FilePart, RowRange, ShardPart {
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

  /**
   * A part of a sharded dataset that the answering server holds ({@link Kind#SHARD}): {@code id} names the part
   * across servers, {@code checksum} (64 hex digits of SHA-256, docs/sharding.md) tells copies of it apart, and
   * {@code dataset} is the path under the server's data root that a query names as its dataset to read it. Two
   * servers holding the same id and checksum hold replicas of one part.
   */
  public record ShardPart(String id, String checksum, String dataset, long bytes, long rows) implements Part {
    /** What a part id may be: letters, digits, '.', '_' and '-', 1 to 128 of them. */
    public static final java.util.regex.Pattern ID = java.util.regex.Pattern.compile("[A-Za-z0-9._-]{1,128}");
    private static final java.util.regex.Pattern CHECKSUM = java.util.regex.Pattern.compile("[0-9a-f]{64}");

    public ShardPart {
      Objects.requireNonNull(id, "id");
      Objects.requireNonNull(checksum, "checksum");
      Objects.requireNonNull(dataset, "dataset");
      if (!ID.matcher(id).matches()) {
        throw new IllegalArgumentException("not a part id: '" + id + "' (1 to 128 letters, digits, '.', '_', '-')");
      }
      if (!CHECKSUM.matcher(checksum).matches()) {
        throw new IllegalArgumentException("part " + id + " has a checksum that is not 64 lowercase hex digits");
      }
      if (dataset.isEmpty() || bytes < 0 || rows < 0) {
        throw new IllegalArgumentException("part " + id + " has no dataset path, or negative bytes or rows");
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
      case SHARD -> ShardPart.class;
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
    if (kind == Kind.SHARD && parts.stream().map(p -> ((ShardPart) p).id()).distinct().count() != parts.size()) {
      throw new IllegalArgumentException("a server holds each part of a sharded dataset once; ids repeat");
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
