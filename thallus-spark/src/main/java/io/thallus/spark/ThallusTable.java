package io.thallus.spark;

import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/** The result of one query (or table, or dataset) on one or more Thallus servers, readable in batches. */
final class ThallusTable implements SupportsRead {
  private final ReadConf conf;
  private final List<TypeMapping.Column> columns;

  ThallusTable(ReadConf conf, List<TypeMapping.Column> columns) {
    this.conf = conf;
    this.columns = columns;
  }

  @Override
  public String name() {
    return "thallus[" + String.join(",", conf.urls()) + "]";
  }

  @Override
  @SuppressWarnings("deprecation")
  public StructType schema() {
    return TypeMapping.schema(columns);
  }

  @Override
  public Set<TableCapability> capabilities() {
    return EnumSet.of(TableCapability.BATCH_READ);
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
    return new ThallusScanBuilder(conf, columns);
  }
}
