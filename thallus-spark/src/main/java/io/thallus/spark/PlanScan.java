package io.thallus.spark;

import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.Statistics;
import org.apache.spark.sql.connector.read.SupportsReportStatistics;
import org.apache.spark.sql.types.StructType;

/**
 * A subtree of Spark's plan run as one DuckDB query ({@link WholePlanStrategy}): a {@link ThallusScan} of that
 * query, one partition, under a name of its own so that EXPLAIN says what happened.
 */
final class PlanScan implements Scan, Batch, SupportsReportStatistics {
  private final ThallusScan scan;
  private final String operators;

  PlanScan(ThallusScan scan, String operators) {
    this.scan = scan;
    this.operators = operators;
  }

  /** The SQL the server runs. */
  String sql() {
    return scan.sql();
  }

  @Override
  public StructType readSchema() {
    return scan.readSchema();
  }

  @Override
  public String description() {
    return "ThallusWholePlan[url=" + String.join(",", scan.conf().urls()) + ", operators=[" + operators
        + "], sql=[" + sql().replace('\n', ' ') + "]]";
  }

  @Override
  public Statistics estimateStatistics() {
    return scan.estimateStatistics();
  }

  @Override
  public Batch toBatch() {
    return this;
  }

  @Override
  public ColumnarSupportMode columnarSupportMode() {
    return scan.columnarSupportMode();
  }

  /**
   * One partition, whatever the catalog's {@code partitions}: a pushed plan's order and limit hold only over its whole
   * result, and splitting it by hash would run the whole query once per partition.
   */
  @Override
  public InputPartition[] planInputPartitions() {
    ReadConf conf = scan.conf();
    return new InputPartition[] {new ThallusInputPartition(conf, 0, sql(), null, readSchema().size(),
        conf.location(0).host())};
  }

  @Override
  public PartitionReaderFactory createReaderFactory() {
    return scan.createReaderFactory();
  }
}
