package io.thallus.spark;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec;
import scala.jdk.javaapi.CollectionConverters;

/** What Spark planned for a read: the Thallus scan in a Dataset's physical plan, and the partitions it split into. */
final class Plans {
  private Plans() {}

  /** The one Thallus scan in {@code df}'s physical plan. */
  static ThallusScan scan(Dataset<?> df) {
    List<BatchScanExec> scans = new ArrayList<>();
    collect(df.queryExecution().sparkPlan(), scans);
    assertThat(scans).as("Thallus scans in the plan").hasSize(1);
    return (ThallusScan) scans.get(0).scan();
  }

  /** The partitions the scan of {@code df} is split into, each with the SQL its task runs. */
  static List<ThallusInputPartition> partitions(Dataset<?> df) {
    List<ThallusInputPartition> partitions = new ArrayList<>();
    for (InputPartition partition : scan(df).planInputPartitions()) {
      partitions.add((ThallusInputPartition) partition);
    }
    return partitions;
  }

  private static void collect(SparkPlan plan, List<BatchScanExec> scans) {
    if (plan instanceof BatchScanExec scan) {
      scans.add(scan);
    }
    for (SparkPlan child : CollectionConverters.asJava(plan.children())) {
      collect(child, scans);
    }
  }
}
