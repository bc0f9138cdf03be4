package io.thallus.spark;

import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.SupportsDynamicOverwrite;
import org.apache.spark.sql.connector.write.SupportsTruncate;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;

/**
 * A write into a table of the server's database. Overwriting is truncating: a DuckDB table has no partitions, so
 * Spark's dynamic partition overwrite replaces every row too.
 */
final class ThallusWriteBuilder implements SupportsTruncate, SupportsDynamicOverwrite {
  private final WriteJob append;
  private final ThallusBatchWrite stagedWrite;
  private WriteMode mode = WriteMode.APPEND;

  /** A write into an existing table. */
  ThallusWriteBuilder(WriteJob append) {
    this.append = append;
    this.stagedWrite = null;
  }

  /** The write of a staged table: its mode is the staging's. */
  ThallusWriteBuilder(ThallusBatchWrite stagedWrite) {
    this.append = null;
    this.stagedWrite = stagedWrite;
  }

  @Override
  public WriteBuilder truncate() {
    mode = WriteMode.TRUNCATE;
    return this;
  }

  @Override
  public WriteBuilder overwriteDynamicPartitions() {
    mode = WriteMode.TRUNCATE;
    return this;
  }

  @Override
  public Write build() {
    BatchWrite batch = stagedWrite != null ? stagedWrite : new ThallusBatchWrite(
        new WriteJob(append.conf(), append.target(), mode, append.jobId(), append.schema(), append.timeZone()), false);
    return new Write() {
      @Override
      public String description() {
        WriteJob job = stagedWrite != null ? null : append;
        return "ThallusWrite[" + (job == null ? "staged" : job.target() + ", " + mode) + "]";
      }

      @Override
      public BatchWrite toBatch() {
        return batch;
      }
    };
  }
}
