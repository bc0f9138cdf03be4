package io.thallus.spark;

import io.thallus.QueryRequest;
import io.thallus.ThallusClient;
import io.thallus.ThallusException;
import io.thallus.ThallusStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * Splits a scan into independent streams, asking the server (server 0) what it needs to know:
 *
 * <ul>
 *   <li>a Parquet dataset read whole ({@code dataset} without {@code query} or {@code table}): by row groups, as
 *       row ranges of its files, balanced by row count;
 *   <li>a table: by ranges of DuckDB's {@code rowid}, split evenly between its smallest and largest;
 *   <li>anything else, or with {@code partitionColumn}: by {@code hash(key) % n}, over the query's result, so any
 *       query (joins, aggregates) splits correctly.
 * </ul>
 */
final class Partitioner {
  private Partitioner() {}

  /** The glob or file the server's {@code dataset} view reads, taken from the view's own definition. */
  private static final Pattern PARQUET_SOURCE = Pattern.compile("read_parquet\\('((?:[^']|'')*)'\\)");

  static List<PartitionSpec> plan(ReadConf conf) {
    int n = conf.partitions();
    if (n == 1) {
      return List.of(new PartitionSpec.Whole());
    }
    if (conf.partitionColumn().isEmpty()) {
      if (conf.dataset().isPresent() && conf.query().isEmpty() && conf.table().isEmpty()) {
        Optional<List<PartitionSpec>> files = byRowGroups(conf, n);
        if (files.isPresent()) {
          return files.get();
        }
      }
      if (conf.table().isPresent()) {
        Optional<List<PartitionSpec>> ranges = byRowId(conf, n);
        if (ranges.isPresent()) {
          return ranges.get();
        }
      }
    }
    List<String> keys = conf.partitionColumn().map(List::of).orElse(List.of());
    List<PartitionSpec> buckets = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      buckets.add(new PartitionSpec.Hash(i, n, keys));
    }
    return buckets;
  }

  private static Optional<List<PartitionSpec>> byRowId(ReadConf conf, int n) {
    String table = Sql.identifier(conf.table().get());
    List<Long> bounds;
    try {
      bounds = longs(conf, "SELECT min(rowid), max(rowid) FROM " + table);
    } catch (ThallusException e) {
      return Optional.empty(); // a view has no rowid: hash instead
    }
    if (bounds.get(0) == null) {
      return Optional.of(List.of(new PartitionSpec.Whole())); // empty table
    }
    long min = bounds.get(0);
    long span = bounds.get(1) - min + 1;
    int count = (int) Math.min(n, span);
    List<PartitionSpec> ranges = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      // The first range is open below and the last open above, so rows added later still land somewhere.
      OptionalLong from = i == 0 ? OptionalLong.empty() : OptionalLong.of(min + span * i / count);
      OptionalLong to = i == count - 1 ? OptionalLong.empty() : OptionalLong.of(min + span * (i + 1) / count);
      ranges.add(new PartitionSpec.RowIdRange(conf.table().get(), from, to));
    }
    return Optional.of(ranges);
  }

  private static Optional<List<PartitionSpec>> byRowGroups(ReadConf conf, int n) {
    List<RowGroup> groups = new ArrayList<>();
    try (ThallusClient client = Connector.connect(conf, 0)) {
      String view = firstString(client, conf,
          "SELECT sql FROM duckdb_views() WHERE view_name = 'dataset' AND temporary");
      if (view == null) {
        return Optional.empty();
      }
      Matcher matcher = PARQUET_SOURCE.matcher(view);
      if (!matcher.find()) {
        return Optional.empty(); // CSV, JSON: no row groups to split by
      }
      String source = matcher.group(1).replace("''", "'");
      String sql = "SELECT file_name, row_group_id, any_value(row_group_num_rows) FROM parquet_metadata("
          + Sql.string(source) + ") GROUP BY ALL ORDER BY ALL";
      try (ThallusStream stream = client.query(Connector.request(conf, sql))) {
        while (stream.hasNext()) {
          try (VectorSchemaRoot root = stream.next()) {
            List<FieldVector> vectors = root.getFieldVectors();
            for (int row = 0; row < root.getRowCount(); row++) {
              groups.add(new RowGroup(vectors.get(0).getObject(row).toString(),
                  ((Number) vectors.get(2).getObject(row)).longValue()));
            }
          }
        }
      }
    }
    if (groups.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(balance(groups, n));
  }

  private record RowGroup(String file, long rows) {}

  /** Consecutive row groups into at most {@code n} partitions of about equal rows; a file's ranges merge. */
  private static List<PartitionSpec> balance(List<RowGroup> groups, int n) {
    long total = groups.stream().mapToLong(RowGroup::rows).sum();
    int count = Math.min(n, groups.size());
    List<PartitionSpec> partitions = new ArrayList<>(count);
    List<PartitionSpec.FileRange> current = new ArrayList<>();
    long assigned = 0;
    long fileOffset = 0;
    String lastFile = null;
    int index = 0;
    for (int g = 0; g < groups.size(); g++) {
      RowGroup group = groups.get(g);
      if (!group.file().equals(lastFile)) {
        fileOffset = 0;
        lastFile = group.file();
      }
      long first = fileOffset;
      long end = fileOffset + group.rows();
      fileOffset = end;
      int last = current.size() - 1;
      if (last >= 0 && current.get(last).file().equals(group.file()) && current.get(last).end() == first) {
        current.set(last, new PartitionSpec.FileRange(group.file(), current.get(last).first(), end));
      } else {
        current.add(new PartitionSpec.FileRange(group.file(), first, end));
      }
      assigned += group.rows();
      int groupsLeft = groups.size() - g - 1;
      int partitionsLeft = count - index - 1;
      boolean full = assigned * count >= total * (index + 1L);
      if (partitionsLeft > 0 && (full || groupsLeft == partitionsLeft)) {
        partitions.add(new PartitionSpec.FileRanges(List.copyOf(current)));
        current.clear();
        index++;
      }
    }
    partitions.add(new PartitionSpec.FileRanges(List.copyOf(current)));
    return partitions;
  }

  private static List<Long> longs(ReadConf conf, String sql) {
    try (ThallusClient client = Connector.connect(conf, 0);
         ThallusStream stream = client.query(Connector.request(conf, sql))) {
      List<Long> values = new ArrayList<>();
      while (stream.hasNext()) {
        try (VectorSchemaRoot root = stream.next()) {
          if (root.getRowCount() > 0 && values.isEmpty()) {
            for (FieldVector vector : root.getFieldVectors()) {
              values.add(vector.isNull(0) ? null : ((BigIntVector) vector).get(0));
            }
          }
        }
      }
      return values;
    }
  }

  private static String firstString(ThallusClient client, ReadConf conf, String sql) {
    String value = null;
    QueryRequest request = Connector.request(conf, sql);
    try (ThallusStream stream = client.query(request)) {
      while (stream.hasNext()) {
        try (VectorSchemaRoot root = stream.next()) {
          if (value == null && root.getRowCount() > 0 && !root.getVector(0).isNull(0)) {
            value = root.getVector(0).getObject(0).toString();
          }
        }
      }
    }
    return value;
  }
}
