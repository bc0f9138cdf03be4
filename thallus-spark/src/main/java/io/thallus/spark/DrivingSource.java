package io.thallus.spark;

import java.io.Serializable;

/**
 * What splits a pushed join across partitions: its left side's source, a table (by rowid ranges) or a Parquet
 * dataset (by row groups). The join's SQL reads it as the CTE {@link ScanQuery#DRIVING}, which each partition
 * defines as its share: {@code wholeSql} (what the left side read before the join) for the scan as a whole.
 */
record DrivingSource(String tableOrNull, String filesOrNull, String wholeSql) implements Serializable {

  static DrivingSource table(String table, String wholeSql) {
    return new DrivingSource(table, null, wholeSql);
  }

  static DrivingSource files(String path, String wholeSql) {
    return new DrivingSource(null, path, wholeSql);
  }

  /** The rows of the source {@code partition} reads, as SQL. */
  String rows(PartitionSpec partition) {
    if (tableOrNull != null) {
      return partition.rowsOf(tableOrNull);
    }
    return partition.datasetCte().orElse(wholeSql);
  }

  /** How EXPLAIN names it. */
  String describe() {
    return tableOrNull != null ? tableOrNull : filesOrNull;
  }
}
