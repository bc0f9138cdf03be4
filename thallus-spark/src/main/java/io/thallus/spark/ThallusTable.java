package io.thallus.spark;

import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The result of one query (or table, or dataset) on one or more Thallus servers, readable in batches; a table of
 * the server's database reached through {@link ThallusCatalog} is writable too.
 */
final class ThallusTable implements SupportsRead, SupportsWrite {
  private final ReadConf conf;
  private final List<TypeMapping.Column> columns;
  private final TableName writeTarget;
  private final String name;

  /** Read only (the {@code thallus} format: its writes go through {@link ThallusSource#createRelation}). */
  ThallusTable(ReadConf conf, List<TypeMapping.Column> columns) {
    this(conf, columns, null, conf.sharded().map(s -> "thallus[sharded " + s.name() + " on " + String.join(",",
        s.servers()) + "]").orElse("thallus[" + String.join(",", conf.urls()) + "]"));
  }

  ThallusTable(ReadConf conf, List<TypeMapping.Column> columns, TableName writeTarget, String name) {
    this.conf = conf;
    this.columns = columns;
    this.writeTarget = writeTarget;
    this.name = name;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  @SuppressWarnings("deprecation")
  public StructType schema() {
    return TypeMapping.schema(columns);
  }

  @Override
  public Set<TableCapability> capabilities() {
    return writeTarget == null ? EnumSet.of(TableCapability.BATCH_READ)
        : EnumSet.of(TableCapability.BATCH_READ, TableCapability.BATCH_WRITE, TableCapability.TRUNCATE,
            TableCapability.OVERWRITE_DYNAMIC);
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
    return new ThallusScanBuilder(conf, columns);
  }

  @Override
  public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
    if (writeTarget == null) {
      throw new UnsupportedOperationException(name + " is a query's result, not a table: write through the thallus "
          + "catalog or with option 'table'");
    }
    return new ThallusWriteBuilder(WriteJob.of(conf, writeTarget, WriteMode.APPEND, info.queryId(), info.schema(),
        SQLConf.get().sessionLocalTimeZone()));
  }
}
