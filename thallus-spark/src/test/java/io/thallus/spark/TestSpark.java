package io.thallus.spark;

import org.apache.spark.sql.SparkSession;

/**
 * The one local[2] Spark session the module's tests share (starting one takes seconds): UI off, UTC session time
 * zone so TIMESTAMPTZ values compare as instants, java.time values from collect(). The whole-plan extension is
 * installed but off; WholePlanTest turns it on for its own queries.
 */
final class TestSpark {
  private TestSpark() {}

  static synchronized SparkSession session() {
    return SparkSession.builder()
        .master("local[2]")
        .appName("thallus-spark-test")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.datetime.java8API.enabled", "true")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.extensions", ThallusExtensions.class.getName())
        .config(WholePlanStrategy.ENABLED, "false")
        .getOrCreate();
  }
}
