package io.thallus.spark;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class SparkReadTest {
  private static TestServer server;
  private static SparkSession spark;

  @BeforeAll
  static void start() {
    server = new TestServer();
    spark = TestSpark.session();
  }

  @AfterAll
  static void stop() throws Exception {
    server.close();
  }

  @AfterEach
  void memoryReturned() {
    assertThat(Connector.allocatedBytes()).as("bytes the connector's clients still hold").isZero();
  }

  @Test
  void readsAQuery() {
    Dataset<Row> df = spark.read().format("thallus")
        .option("url", server.url())
        .option("query", "SELECT i AS id, 'n' || i AS name FROM range(1000) t(i)")
        .load();
    assertThat(df.schema().fieldNames()).containsExactly("id", "name");
    List<Row> rows = df.orderBy("id").collectAsList();
    assertThat(rows).hasSize(1000);
    assertThat(rows.get(7).getLong(0)).isEqualTo(7L);
    assertThat(rows.get(7).getString(1)).isEqualTo("n7");
  }
}
