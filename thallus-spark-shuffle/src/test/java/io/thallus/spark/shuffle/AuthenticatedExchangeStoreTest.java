package io.thallus.spark.shuffle;

import static org.apache.spark.sql.functions.col;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.exchange.EndpointAddress;
import io.thallus.exchange.EndpointOptions;
import io.thallus.exchange.ExchangeEndpoint;
import io.thallus.exchange.PartitionReader;
import io.thallus.exchange.ShuffleFetchException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.MapOutputTrackerMaster;
import org.apache.spark.SparkEnv;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.storage.ShuffleBlockId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import scala.Tuple2;
import scala.Tuple3;
import scala.collection.Seq;

/**
 * The exchange store ({@code store=exchange}, over tcp) in a cluster with {@code spark.authenticate} on: the
 * executors' endpoints take the application's secret, so the answers are Spark's, and someone who reaches an
 * executor's endpoint (its port is in the MapStatus locations the driver holds) without the secret, or with another,
 * is refused, while one who presents the secret reads the same map output.
 */
class AuthenticatedExchangeStoreTest {
  private static final String SECRET = "the application's secret";
  private static final int PARTITIONS = 5;

  @TempDir
  Path work;

  @Test
  void executorsShareTheSecretAndAStrangerIsRefusedByTheirEndpoints() throws Exception {
    try (TestCluster cluster = TestCluster.builder().conf(ShuffleOptions.STORE, "exchange")
             .clusterConf("spark.authenticate", "true").clusterConf("spark.authenticate.secret", SECRET).start(work);
         BufferAllocator allocator = new RootAllocator()) {
      SparkSession spark = cluster.spark;
      assertThat(spark.sparkContext().env().securityManager().isAuthenticationEnabled()).isTrue();
      ExchangeAnswers answers = ExchangeAnswers.of(spark, () -> ThallusExchangeTest.syntheticPlan(spark, 100_000));
      assertThat(answers.thallus).hasSize(100_000).isEqualTo(answers.spark);
      assertThat(answers.thallusPlan).contains("ThallusShuffleExchange");

      spark.conf().set("spark.sql.adaptive.enabled", "false");
      Dataset<Row> shuffled = spark.range(0, 50_000, 1, 3).toDF().repartition(PARTITIONS, col("id"));
      assertThat(shuffled.collectAsList()).hasSize(50_000);
      int shuffleId = ThallusExchangeTest.thallusShuffleId(shuffled.queryExecution().executedPlan());
      assertThat(shuffleId).isNotNegative();
      MapOutput output = firstMapOutput(shuffleId);

      try (ExchangeEndpoint sharing = endpoint(allocator, "sharing", b -> b.secret(SECRET));
           ExchangeEndpoint stranger = endpoint(allocator, "stranger", b -> b);
           ExchangeEndpoint another = endpoint(allocator, "another", b -> b.secret("another application's"))) {
        assertThat(rows(sharing, shuffleId, output)).as("rows read with the secret").isPositive();
        for (ExchangeEndpoint refused : List.of(stranger, another)) {
          assertThatThrownBy(() -> rows(refused, shuffleId, output))
              .isInstanceOfSatisfying(ShuffleFetchException.class, e -> {
                assertThat(e.peer()).isEqualTo(output.endpoint);
                assertThat(e.getCause()).isInstanceOfSatisfying(ThallusException.class,
                    cause -> assertThat(cause.code()).isEqualTo(StatusCode.UNAUTHENTICATED));
              });
        }
      }
    }
  }

  /** One executor's endpoint (host and port of its MapStatus location), a reduce partition and its map ids there. */
  private record MapOutput(EndpointAddress endpoint, int partition, List<Long> mapIds) {}

  /** From the driver's MapOutputTracker, as a reducer would ask it. */
  private static MapOutput firstMapOutput(int shuffleId) {
    MapOutputTrackerMaster tracker = (MapOutputTrackerMaster) SparkEnv.get().mapOutputTracker();
    scala.collection.Iterator<Tuple2<BlockManagerId, Seq<Tuple3<BlockId, Object, Object>>>> locations =
        tracker.getMapSizesByExecutorId(shuffleId, 0, Integer.MAX_VALUE, 0, PARTITIONS);
    Tuple2<BlockManagerId, Seq<Tuple3<BlockId, Object, Object>>> first = locations.next();
    EndpointAddress endpoint = new EndpointAddress(first._1().host(), first._1().port());
    int partition = -1;
    List<Long> mapIds = new ArrayList<>();
    for (Tuple3<BlockId, Object, Object> block : scala.jdk.javaapi.CollectionConverters.asJava(first._2())) {
      ShuffleBlockId id = (ShuffleBlockId) block._1();
      if (partition < 0) {
        partition = id.reduceId();
      }
      if (id.reduceId() == partition) {
        mapIds.add(id.mapId());
      }
    }
    return new MapOutput(endpoint, partition, mapIds);
  }

  private static long rows(ExchangeEndpoint reader, int shuffleId, MapOutput output) {
    long rows = 0;
    try (PartitionReader batches = reader.read(shuffleId, output.partition,
        new LinkedHashMap<>(Map.of(output.endpoint, output.mapIds)))) {
      for (VectorSchemaRoot batch = batches.next(); batch != null; batch = batches.next()) {
        rows += batch.getRowCount();
      }
    }
    return rows;
  }

  private ExchangeEndpoint endpoint(BufferAllocator allocator, String name, UnaryOperator<EndpointOptions.Builder> how) {
    return ExchangeEndpoint.start(how.apply(EndpointOptions.builder(allocator, work.resolve(name)).push(false))
        .build());
  }
}
