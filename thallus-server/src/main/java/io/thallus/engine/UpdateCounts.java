package io.thallus.engine;

import java.util.Arrays;

/**
 * What a statement without rows answers: the rows it changed, one count per run (one, or one per row of parameters
 * of {@link QuerySpec#parameterRows}); -1 for a statement that changes no rows (DDL, SET), as DuckDB's own driver
 * says.
 */
public final class UpdateCounts {
  private final long[] counts;

  private UpdateCounts(long[] counts) {
    this.counts = counts;
  }

  public static UpdateCounts of(long... counts) {
    if (counts.length == 0) {
      throw new IllegalArgumentException("an update count needs at least one run");
    }
    return new UpdateCounts(counts.clone());
  }

  /** The counts in run order (a copy). */
  public long[] counts() {
    return counts.clone();
  }

  public int runs() {
    return counts.length;
  }

  public long count(int run) {
    return counts[run];
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof UpdateCounts o && Arrays.equals(counts, o.counts);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(counts);
  }

  @Override
  public String toString() {
    return "UpdateCounts" + Arrays.toString(counts);
  }
}
