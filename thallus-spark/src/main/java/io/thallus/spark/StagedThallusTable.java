package io.thallus.spark;

import java.util.EnumSet;
import java.util.Set;
import org.apache.spark.sql.connector.catalog.StagedTable;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.StructType;

/**
 * A table being created or replaced by CREATE [OR REPLACE] TABLE ... AS SELECT (or {@code writeTo(...).create()},
 * {@code createOrReplace()}, {@code replace()}): nothing changes on the server until Spark commits the staged
 * changes, and then creation (or replacement) and rows land in one transaction.
 */
final class StagedThallusTable implements StagedTable, SupportsWrite {
  private final ReadConf conf;
  private final TableName target;
  private final StructType schema;
  private final WriteMode mode;
  private ThallusBatchWrite write;
  private WriteJob job;

  StagedThallusTable(ReadConf conf, TableName target, StructType schema, WriteMode mode) {
    this.conf = conf;
    this.target = target;
    this.schema = schema;
    this.mode = mode;
  }

  @Override
  public String name() {
    return target.sql();
  }

  @Override
  @SuppressWarnings("deprecation")
  public StructType schema() {
    return schema;
  }

  @Override
  public Set<TableCapability> capabilities() {
    // REPLACE ... AS SELECT writes with a truncate: the staged table is empty until the commit anyway.
    return EnumSet.of(TableCapability.BATCH_WRITE, TableCapability.TRUNCATE);
  }

  @Override
  public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
    job = WriteJob.of(conf, target, mode, info.queryId(), info.schema(), SQLConf.get().sessionLocalTimeZone());
    write = new ThallusBatchWrite(job, true);
    return new ThallusWriteBuilder(write);
  }

  @Override
  public void commitStagedChanges() {
    if (write != null) {
      write.commitStaged();
    } else {
      WriteJob.of(conf, target, mode, java.util.UUID.randomUUID().toString(), schema,
          SQLConf.get().sessionLocalTimeZone()).commit(java.util.List.of());
    }
  }

  @Override
  public void abortStagedChanges() {
    if (job != null) {
      job.cleanUp();
    }
  }
}
