package io.thallus.spark;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.WriterCommitMessage;

/**
 * The driver's side of a write ({@link WriteJob}). A staged table (CREATE/REPLACE ... AS SELECT through the
 * catalog) commits when Spark commits the staged changes; any other write when Spark commits the job.
 */
final class ThallusBatchWrite implements BatchWrite {
  private final WriteJob job;
  private final boolean staged;
  private List<StagedPart> committed;

  ThallusBatchWrite(WriteJob job, boolean staged) {
    this.job = job;
    this.staged = staged;
  }

  @Override
  public DataWriterFactory createBatchWriterFactory(PhysicalWriteInfo info) {
    return ThallusDataWriter.factory(job);
  }

  @Override
  public void commit(WriterCommitMessage[] messages) {
    List<StagedPart> parts = new ArrayList<>();
    for (WriterCommitMessage message : messages) {
      if (message != null) {
        parts.add((StagedPart) message);
      }
    }
    if (staged) {
      committed = parts;
    } else {
      job.commit(parts);
    }
  }

  @Override
  public void abort(WriterCommitMessage[] messages) {
    job.cleanUp();
  }

  /** For a staged table: makes the rows of the committed job the table's. */
  void commitStaged() {
    job.commit(committed == null ? List.of() : committed);
  }
}
