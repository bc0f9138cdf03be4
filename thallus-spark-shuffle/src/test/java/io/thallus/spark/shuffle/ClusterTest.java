package io.thallus.spark.shuffle;

import java.nio.file.Path;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * A test class whose tests share one {@link TestCluster} (starting one takes a while): started before the first
 * test from the builder the subclass hands over, closed after the last. A Spark closure in a subclass must not
 * touch these fields, or it would capture the test instance.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class ClusterTest {
  private final TestCluster.Builder setup;
  /** The class's folder: the workers' folders and whatever the tests write. */
  Path work;
  TestCluster cluster;
  SparkSession spark;

  ClusterTest(TestCluster.Builder setup) {
    this.setup = setup;
  }

  @BeforeAll
  void startCluster(@TempDir Path folder) throws Exception {
    work = folder;
    cluster = setup.start(work);
    spark = cluster.spark;
  }

  @AfterAll
  void closeCluster() {
    if (cluster != null) {
      cluster.close();
    }
  }
}
