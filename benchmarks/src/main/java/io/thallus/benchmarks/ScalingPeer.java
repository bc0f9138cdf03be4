package io.thallus.benchmarks;

import java.util.Arrays;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * One contender of {@link ScalingBench}: a transport's K clients, or K in-process readers or writers (a ceiling).
 * {@link #run} is the work of the {@code index}-th of K at once; it returns what arrived or was written, for the
 * check.
 */
interface ScalingPeer extends AutoCloseable {
  /** What one reader received or one writer wrote: rows, and sums of the columns that were added up. */
  record Tally(long rows, long[] sums) {
    public Tally {
      sums = sums.clone();
    }

    @Override
    public boolean equals(Object other) {
      return other instanceof Tally that && rows == that.rows && Arrays.equals(sums, that.sums);
    }

    @Override
    public int hashCode() {
      return Long.hashCode(rows) * 31 + Arrays.hashCode(sums);
    }

    @Override
    public String toString() {
      return rows + " rows, sums " + Arrays.toString(sums);
    }
  }

  /**
   * Adds up batches as a reader gets them: rows always, the first column's sum always (cheap next to the transfer),
   * every column's sum only when asked (an untimed pull checks every value's column sums).
   */
  final class Adder {
    private final boolean everyColumn;
    private long rows;
    private long[] sums;

    Adder(boolean everyColumn) {
      this.everyColumn = everyColumn;
    }

    void add(VectorSchemaRoot batch) {
      int columns = everyColumn ? batch.getFieldVectors().size() : 1;
      if (sums == null) {
        sums = new long[columns];
      }
      int count = batch.getRowCount();
      for (int c = 0; c < columns; c++) {
        BigIntVector vector = (BigIntVector) batch.getVector(c);
        long sum = 0;
        for (int row = 0; row < count; row++) {
          sum += vector.get(row);
        }
        sums[c] += sum;
      }
      rows += count;
    }

    Tally tally() {
      return new Tally(rows, sums == null ? new long[0] : sums);
    }
  }

  String name();

  /** Whether this is a ceiling (in-process, no transport) rather than a transport's clients. */
  boolean ceiling();

  /** The {@code index}-th reader's or writer's work; {@code everyColumn} asks a reader to add up every column. */
  Tally run(int index, boolean everyColumn) throws Exception;

  @Override
  default void close() throws Exception {}
}
