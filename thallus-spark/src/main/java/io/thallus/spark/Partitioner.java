package io.thallus.spark;

import io.thallus.DatasetDescription;
import io.thallus.ThallusClient;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Splits a scan into independent streams, from what the server (server 0) says the read's source is
 * ({@link ThallusClient#describe}):
 *
 * <ul>
 *   <li>a Parquet dataset read whole ({@code dataset} without {@code query} or {@code table}): by row groups, as
 *       row ranges of its files, balanced by row count;
 *   <li>a table, or a pushed join of a driving table: by ranges of DuckDB's {@code rowid}, split evenly between its
 *       smallest and largest;
 *   <li>anything else (a view, CSV or JSON files, a query), or with {@code partitionColumn}: by {@code hash(key) % n},
 *       over the query's result, so any query (joins, aggregates) splits correctly.
 * </ul>
 *
 * <p>Only what the source is decides the split: an error describing it fails the plan (see {@link #describe}).
 */
final class Partitioner {
  private static final Logger LOG = LoggerFactory.getLogger(Partitioner.class);

  private Partitioner() {}

  static List<PartitionSpec> plan(ReadConf conf) {
    int n = conf.partitions();
    if (n == 1) {
      return List.of(new PartitionSpec.Whole());
    }
    if (conf.partitionColumn().isEmpty()) {
      Optional<String> drivingFiles = conf.driving().map(DrivingSource::filesOrNull);
      if (drivingFiles.isPresent()) {
        // A pushed join of a Parquet dataset: its row groups (its other side is read whole by each part).
        return byRowGroups(conf, drivingFiles.get(), n).orElseGet(() -> byHash(n, List.of()));
      }
      if (conf.dataset().isPresent() && conf.query().isEmpty() && conf.table().isEmpty()) {
        Optional<List<PartitionSpec>> files = byRowGroups(conf, conf.dataset().get(), n);
        if (files.isPresent()) {
          return files.get();
        }
      }
      // A table, or a pushed join of one (its driving table: the join's other sides are read whole by each part).
      Optional<String> table = conf.driving().map(DrivingSource::tableOrNull).or(conf::table);
      if (table.isPresent()) {
        Optional<List<PartitionSpec>> ranges = byRowId(conf, table.get(), n);
        if (ranges.isPresent()) {
          return ranges.get();
        }
      }
    }
    return byHash(n, conf.partitionColumn().map(List::of).orElse(List.of()));
  }

  private static List<PartitionSpec> byHash(int n, List<String> keys) {
    List<PartitionSpec> buckets = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      buckets.add(new PartitionSpec.Hash(i, n, keys));
    }
    return buckets;
  }

  private static Optional<List<PartitionSpec>> byRowId(ReadConf conf, String name, int n) {
    Optional<DatasetDescription> table = describe(conf, TableName.parse(name).sql(), conf.dataset().orElse(""));
    if (table.isEmpty() || table.get().kind() == DatasetDescription.Kind.VIEW) {
      return Optional.empty(); // a view has no rowid: hash instead
    }
    if (table.get().kind() != DatasetDescription.Kind.TABLE) {
      throw new IllegalStateException("the server describes table '" + name + "' as "
          + table.get().kind() + ", neither a table nor a view");
    }
    List<DatasetDescription.Part> parts = table.get().parts();
    if (parts.isEmpty()) {
      return Optional.of(List.of(new PartitionSpec.Whole())); // empty table
    }
    long min = ((DatasetDescription.RowRange) parts.get(0)).firstRowId();
    long max = ((DatasetDescription.RowRange) parts.get(parts.size() - 1)).endRowId() - 1;
    long span = max - min + 1;
    int count = (int) Math.min(n, span);
    List<PartitionSpec> ranges = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      // The first range is open below and the last open above, so rows added later still land somewhere.
      OptionalLong from = i == 0 ? OptionalLong.empty() : OptionalLong.of(min + span * i / count);
      OptionalLong to = i == count - 1 ? OptionalLong.empty() : OptionalLong.of(min + span * (i + 1) / count);
      ranges.add(new PartitionSpec.RowIdRange(name, from, to));
    }
    return Optional.of(ranges);
  }

  private static Optional<List<PartitionSpec>> byRowGroups(ReadConf conf, String dataset, int n) {
    Optional<DatasetDescription> files = describe(conf, "dataset", dataset);
    if (files.isEmpty() || files.get().kind() != DatasetDescription.Kind.FILES) {
      return Optional.empty();
    }
    List<RowGroup> groups = new ArrayList<>();
    for (DatasetDescription.Part part : files.get().parts()) {
      DatasetDescription.FilePart file = (DatasetDescription.FilePart) part;
      if (file.rowGroupRows().isEmpty() && file.rows() > 0) {
        return Optional.empty(); // CSV, JSON: no row groups to split by
      }
      for (long rows : file.rowGroupRows()) {
        groups.add(new RowGroup(file.path(), rows));
      }
    }
    if (groups.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(balance(groups, n));
  }

  /**
   * What the server says {@code name} is, with the read's dataset bound. Empty only where the server cannot say
   * although the name is fine: an engine that does not describe names (UNIMPLEMENTED), or a source of more parts
   * than one answer holds (OUT_OF_RANGE); the scan then splits by hash, which is right but reads every row in
   * every partition, so it is logged as a warning. Any other error (no such table, a name that is not one, a
   * server that cannot be reached, or is short of connections or memory now: RESOURCE_EXHAUSTED) fails the plan
   * here with the server's message, never a silent hash split. The first server of the read is asked, or, when it
   * cannot be reached, the next in turn, as a task connects (replicas, or a shard's other holders).
   */
  private static Optional<DatasetDescription> describe(ReadConf conf, String name, String dataset) {
    try (ThallusClient client = Connector.connectForRead(conf, 0)) {
      return Optional.of(client.describe(name, dataset));
    } catch (ThallusException e) {
      if (e.code() == StatusCode.UNIMPLEMENTED || e.code() == StatusCode.OUT_OF_RANGE) {
        LOG.warn("splitting {} by hash of its rows (every partition reads all of them): the server cannot describe"
            + " it: {}", name, e.getMessage());
        return Optional.empty();
      }
      throw ThallusException.of(e.code(), "cannot split " + name + " into partitions: " + e.getMessage(), e);
    }
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
}
