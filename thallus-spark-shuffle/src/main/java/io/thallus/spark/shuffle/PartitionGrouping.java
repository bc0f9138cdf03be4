package io.thallus.spark.shuffle;

import java.util.Arrays;

/**
 * An input batch's rows grouped by reduce partition, for the map side to copy them column by column: each row's
 * partition id (computed once for the batch), then a counting sort: the rows per partition, where each partition's
 * run starts, and one array of row indices with each partition's rows together, in their order in the batch. Its
 * arrays are kept from one batch to the next.
 */
final class PartitionGrouping {
  private final int partitions;
  /** Where partition p's rows start in {@link #rowIds}; p + 1's start is its end. */
  private final int[] starts;
  private final int[] present;
  private int presentCount;
  private int[] ids = new int[0];
  private int[] rowIds = new int[0];

  PartitionGrouping(int partitions) {
    this.partitions = partitions;
    this.starts = new int[partitions + 1];
    this.present = new int[partitions];
  }

  /**
   * Groups the first {@code rows} rows of {@code sources}' columns by their partitions under {@code partitionIds}.
   *
   * @throws IllegalStateException where an id falls outside the exchange's partitions
   */
  void group(RowPartitionIds partitionIds, ColumnSource[] sources, int rows) {
    if (ids.length < rows) {
      ids = new int[rows];
      rowIds = new int[rows];
    }
    int[] of = ids;
    partitionIds.of(sources, rows, of);
    // Counts land at starts[p + 1], so that the running sum turns them into each partition's start.
    Arrays.fill(starts, 0);
    for (int row = 0; row < rows; row++) {
      int partition = of[row];
      if (partition < 0 || partition >= partitions) {
        throw new IllegalStateException("Row " + row + " of an input batch has partition id " + partition
            + ", outside the exchange's " + partitions + " partitions");
      }
      starts[partition + 1]++;
    }
    presentCount = 0;
    for (int partition = 0; partition < partitions; partition++) {
      if (starts[partition + 1] > 0) {
        present[presentCount++] = partition;
      }
      starts[partition + 1] += starts[partition];
    }
    // Placing each row at its partition's next free slot moves that slot; the starts are restored after.
    int[] into = rowIds;
    for (int row = 0; row < rows; row++) {
      into[starts[of[row]]++] = row;
    }
    System.arraycopy(starts, 0, starts, 1, partitions);
    starts[0] = 0;
  }

  /** The row indices of the batch, partition by partition. */
  int[] rowIds() {
    return rowIds;
  }

  /** Where {@code partition}'s rows start in {@link #rowIds}. */
  int start(int partition) {
    return starts[partition];
  }

  /** Where {@code partition}'s rows end in {@link #rowIds}. */
  int end(int partition) {
    return starts[partition + 1];
  }

  /** How many partitions have rows in the batch. */
  int presentCount() {
    return presentCount;
  }

  /** The {@code k}th partition with rows, in partition order. */
  int present(int k) {
    return present[k];
  }
}
