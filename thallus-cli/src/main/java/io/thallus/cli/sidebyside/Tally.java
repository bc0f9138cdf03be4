package io.thallus.cli.sidebyside;

import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * What a pull counts as its batches go by: rows, batches, and the {@link Checksum} when it verifies; the progress
 * bar (may be null) advances with each batch. One per pull.
 */
public final class Tally {
  private final boolean verify;
  private final Progress progress;
  private long rows;
  private long batches;
  private long checksum;

  public Tally(boolean verify, Progress progress) {
    this.verify = verify;
    this.progress = progress;
  }

  /** A batch as the reader sees it: counted, and checksummed when verifying. */
  public void add(VectorSchemaRoot batch) {
    add(batch.getRowCount());
    if (verify) {
      checksum = Checksum.update(checksum, batch);
    }
  }

  /** A batch of {@code rowCount} rows that is counted only. */
  public void add(int rowCount) {
    rows += rowCount;
    batches++;
    if (progress != null) {
      progress.advance(rowCount);
    }
  }

  /** The pull these batches made, with what the caller measured. */
  public Pull pull(long elapsedNanos, long bytes, long serverCpuNanos, long clientCpuNanos) {
    return new Pull(elapsedNanos, rows, batches, bytes, checksum, serverCpuNanos, clientCpuNanos);
  }
}
