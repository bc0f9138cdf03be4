package io.thallus.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.Location;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import io.thallus.testing.ShardedServers;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A sharded lineitem on three servers, each on its own loopback address (127.0.0.1, .2, .3) with its own data root,
 * read by Spark local[2] as one table: values equal DuckDB over all the files at once (a TPC-H Q1-like GROUP BY with
 * AVG and COUNT DISTINCT, a Q6-like filter), and each partition prefers the host of the server holding its shard.
 */
class ShardedReadSparkTest {
  @TempDir
  static Path work;

  private static final String[] HOSTS = ShardedServers.HOSTS.toArray(String[]::new);
  private static final int ROWS_PER_PART = 30_000;
  private static BufferAllocator allocator;
  private static ShardedServers sharded;
  private static final List<ThallusServer> servers = new ArrayList<>();
  private static final List<Path> partDirs = new ArrayList<>();
  private static final List<io.micrometer.core.instrument.simple.SimpleMeterRegistry> meters = new ArrayList<>();
  private static SparkSession spark;
  private static String urls;

  @BeforeAll
  static void start() throws Exception {
    allocator = new RootAllocator();
    sharded = ShardedServers.start(allocator, work, "lineitem", ShardedServers.lineitem(ROWS_PER_PART),
        (part, server) -> {
          if (part == 1) {
            server.shard("middle", "m1", "lineitem/part1"); // a sharded dataset of one server only
          }
        });
    for (ShardedServers.Node node : sharded.nodes()) {
      servers.add(node.server());
      partDirs.add(node.partDir());
      meters.add(node.meters());
    }
    urls = sharded.urls("tcp");
    spark = TestSpark.session();
    spark.conf().set("spark.sql.catalog.shardcat", ThallusCatalog.class.getName());
    spark.conf().set("spark.sql.catalog.shardcat.url", urls);
  }

  @AfterAll
  static void stop() {
    sharded.close();
    allocator.close();
  }

  private static Dataset<Row> lineitem() {
    return spark.read().format("thallus").option("url", urls).option("sharded", "lineitem").load();
  }

  /** DuckDB over every part's files at once. */
  private static List<List<Object>> duckdb(String select) throws Exception {
    StringBuilder files = new StringBuilder("[");
    for (Path dir : partDirs) {
      files.append(files.length() > 1 ? ", " : "").append('\'').append(dir.resolve("data.parquet")).append('\'');
    }
    String sql = select.replace("lineitem", "read_parquet(" + files + "])");
    List<List<Object>> rows = new ArrayList<>();
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = duckdb.createStatement();
         ResultSet result = statement.executeQuery(sql)) {
      int n = result.getMetaData().getColumnCount();
      while (result.next()) {
        List<Object> row = new ArrayList<>();
        for (int i = 1; i <= n; i++) {
          row.add(result.getObject(i));
        }
        rows.add(row);
      }
    }
    return rows;
  }

  private static BigDecimal decimal(Object value) {
    return (value instanceof BigDecimal d ? d : new BigDecimal(value.toString())).stripTrailingZeros();
  }

  @Test
  void aGroupByOverTheShardsEqualsDuckDBOverAllTheFiles() throws Exception {
    lineitem().createOrReplaceTempView("sharded_lineitem");
    Dataset<Row> q1 = spark.sql("SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty, "
        + "sum(l_extendedprice) AS sum_base, avg(l_discount) AS avg_disc, count(*) AS n, "
        + "count(DISTINCT l_quantity) AS qtys FROM sharded_lineitem WHERE l_shipdate <= DATE '1998-09-02' "
        + "GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus");
    List<Row> got = q1.collectAsList();
    List<List<Object>> expected = duckdb("SELECT l_returnflag, l_linestatus, sum(l_quantity), sum(l_extendedprice), "
        + "avg(l_discount), count(*), count(DISTINCT l_quantity) FROM lineitem WHERE l_shipdate <= DATE '1998-09-02' "
        + "GROUP BY ALL ORDER BY 1, 2");
    assertThat(got).hasSize(expected.size()).hasSize(6);
    for (int i = 0; i < got.size(); i++) {
      Row row = got.get(i);
      List<Object> want = expected.get(i);
      assertThat(row.getString(0)).isEqualTo(want.get(0));
      assertThat(row.getString(1)).isEqualTo(want.get(1));
      assertThat(decimal(row.get(2))).isEqualTo(decimal(want.get(2)));
      assertThat(decimal(row.get(3))).isEqualTo(decimal(want.get(3)));
      assertThat(((BigDecimal) row.get(4)).doubleValue()).isCloseTo(((Number) want.get(4)).doubleValue(),
          org.assertj.core.data.Offset.offset(1e-6));
      assertThat(row.getLong(5)).isEqualTo(((Number) want.get(5)).longValue());
      assertThat(row.getLong(6)).isEqualTo(((Number) want.get(6)).longValue());
    }
    String plan = q1.queryExecution().executedPlan().toString();
    assertThat(plan).contains("sharded=lineitem (3 shards, 1 partition(s) each)");
    // COUNT DISTINCT is not decomposable: Spark aggregates the rows itself.
    assertThat(plan).doesNotContain("pushedAggregate");

    // Without it, each shard answers a partial aggregate (AVG as SUM and COUNT), Spark merging them.
    Dataset<Row> partial = spark.sql("SELECT l_returnflag, l_linestatus, sum(l_quantity), avg(l_discount), count(*) "
        + "FROM sharded_lineitem GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus");
    assertThat(partial.queryExecution().executedPlan().toString()).contains("pushedAggregate=[");
    List<Row> merged = partial.collectAsList();
    List<List<Object>> mergedWant = duckdb("SELECT l_returnflag, l_linestatus, sum(l_quantity), avg(l_discount), "
        + "count(*) FROM lineitem GROUP BY ALL ORDER BY 1, 2");
    assertThat(merged).hasSize(mergedWant.size());
    for (int i = 0; i < merged.size(); i++) {
      assertThat(decimal(merged.get(i).get(2))).isEqualTo(decimal(mergedWant.get(i).get(2)));
      assertThat(((BigDecimal) merged.get(i).get(3)).doubleValue()).isCloseTo(
          ((Number) mergedWant.get(i).get(3)).doubleValue(), org.assertj.core.data.Offset.offset(1e-6));
      assertThat(merged.get(i).getLong(4)).isEqualTo(((Number) mergedWant.get(i).get(4)).longValue());
    }
    // Top-N: each shard sends its top rows, Spark merges them.
    List<Row> top = spark.sql("SELECT l_orderkey, l_extendedprice FROM sharded_lineitem "
        + "ORDER BY l_extendedprice DESC, l_orderkey LIMIT 5").collectAsList();
    List<List<Object>> topWant = duckdb("SELECT l_orderkey, l_extendedprice FROM lineitem "
        + "ORDER BY l_extendedprice DESC, l_orderkey LIMIT 5");
    for (int i = 0; i < 5; i++) {
      assertThat(top.get(i).getLong(0)).isEqualTo(((Number) topWant.get(i).get(0)).longValue());
    }
    assertThat(Connector.allocatedBytes()).isZero();
  }

  @Test
  void aJoinOrAWholePlanOverShardsIsNeverPushedToOneServer() throws Exception {
    spark.conf().set(WholePlanStrategy.ENABLED, "true");
    spark.conf().set("spark.sql.optimizer.datasourceV2JoinPushdown", "true");
    try {
      lineitem().createOrReplaceTempView("sharded_a");
      lineitem().createOrReplaceTempView("sharded_b");
      Dataset<Row> joined = spark.sql("SELECT count(*), sum(a.l_quantity) FROM sharded_a a JOIN sharded_b b "
          + "ON a.l_orderkey = b.l_orderkey + 1 WHERE b.l_returnflag = 'N'");
      String plan = joined.queryExecution().executedPlan().toString();
      assertThat(plan).doesNotContain("ThallusWholePlan").doesNotContain("pushedJoin");
      Row row = joined.collectAsList().get(0);
      List<Object> want = duckdb("SELECT count(*), sum(a.l_quantity) FROM lineitem a JOIN lineitem b "
          + "ON a.l_orderkey = b.l_orderkey + 1 WHERE b.l_returnflag = 'N'").get(0);
      assertThat(row.getLong(0)).isEqualTo(((Number) want.get(0)).longValue()).isPositive();
      assertThat(decimal(row.get(1))).isEqualTo(decimal(want.get(1)));

      // One sharded leaf under an aggregate and a sort: the whole plan would run on one server; it is refused.
      Dataset<Row> grouped = spark.sql("SELECT l_returnflag, count(*), sum(l_quantity) FROM sharded_a "
          + "GROUP BY l_returnflag ORDER BY l_returnflag");
      assertThat(grouped.queryExecution().executedPlan().toString()).doesNotContain("ThallusWholePlan");
      List<Row> groups = grouped.collectAsList();
      List<List<Object>> groupsWant = duckdb("SELECT l_returnflag, count(*), sum(l_quantity) FROM lineitem "
          + "GROUP BY l_returnflag ORDER BY l_returnflag");
      assertThat(groups).hasSize(3);
      for (int i = 0; i < groups.size(); i++) {
        assertThat(groups.get(i).getLong(1)).isEqualTo(((Number) groupsWant.get(i).get(1)).longValue());
        assertThat(decimal(groups.get(i).get(2))).isEqualTo(decimal(groupsWant.get(i).get(2)));
      }
    } finally {
      spark.conf().set(WholePlanStrategy.ENABLED, "false");
      spark.conf().unset("spark.sql.optimizer.datasourceV2JoinPushdown");
    }
  }

  @Test
  void tpchQ3JoinsTheShardedLineitemWithOrdersAndCustomerInSpark() throws Exception {
    Path root = work.resolve("node0");
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = duckdb.createStatement()) {
      statement.execute("COPY (SELECT i AS o_orderkey, i % 1500 AS o_custkey, "
          + "DATE '1992-01-01' + (i * 7 % 2400)::INTEGER AS o_orderdate, 0 AS o_shippriority FROM range(0, "
          + (3 * ROWS_PER_PART) + ") t(i)) TO '"
          + root.resolve("orders.parquet") + "' (FORMAT parquet)");
      statement.execute("COPY (SELECT c AS c_custkey, ['BUILDING','AUTOMOBILE','MACHINERY'][1 + c % 3] AS c_mktsegment"
          + " FROM range(0, 1500) t(c)) TO '" + root.resolve("customer.parquet") + "' (FORMAT parquet)");
    }
    String server0 = servers.get(0).getLocation().withTransport("tcp").toString();
    lineitem().createOrReplaceTempView("q3_lineitem");
    spark.read().format("thallus").option("url", server0).option("dataset", "orders.parquet").load()
        .createOrReplaceTempView("q3_orders");
    spark.read().format("thallus").option("url", server0).option("dataset", "customer.parquet").load()
        .createOrReplaceTempView("q3_customer");
    String q3 = "SELECT l_orderkey, sum(l_extendedprice * (1 - l_discount)) AS revenue, o_orderdate, o_shippriority "
        + "FROM %s, %s, %s WHERE c_mktsegment = 'BUILDING' AND c_custkey = o_custkey AND l_orderkey = o_orderkey "
        + "AND o_orderdate < DATE '1995-03-15' AND l_shipdate > DATE '1995-03-15' "
        + "GROUP BY l_orderkey, o_orderdate, o_shippriority ORDER BY revenue DESC, o_orderdate, l_orderkey LIMIT 10";
    List<Row> got = spark.sql(String.format(q3, "q3_customer", "q3_orders", "q3_lineitem")).collectAsList();
    List<List<Object>> want = duckdb(String.format(q3, "read_parquet('" + root.resolve("customer.parquet") + "')",
        "read_parquet('" + root.resolve("orders.parquet") + "')", "lineitem"));
    assertThat(got).hasSize(10).hasSize(want.size());
    for (int i = 0; i < got.size(); i++) {
      assertThat(got.get(i).getLong(0)).isEqualTo(((Number) want.get(i).get(0)).longValue());
      assertThat(decimal(got.get(i).get(1))).isEqualTo(decimal(want.get(i).get(1)));
      assertThat(got.get(i).get(2).toString()).isEqualTo(want.get(i).get(2).toString());
    }
  }

  @Test
  void aFilterAndProjectionRunOnEachShard() throws Exception {
    Dataset<Row> q6 = lineitem().filter("l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' "
        + "AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24").selectExpr("l_orderkey",
        "l_extendedprice * l_discount AS revenue");
    Map<Long, BigDecimal> got = new TreeMap<>();
    for (Row row : q6.collectAsList()) {
      assertThat(got.put(row.getLong(0), decimal(row.get(1)))).isNull();
    }
    Map<Long, BigDecimal> expected = new TreeMap<>();
    for (List<Object> row : duckdb("SELECT l_orderkey, l_extendedprice * l_discount FROM lineitem WHERE "
        + "l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' AND l_discount BETWEEN 0.05 AND 0.07 "
        + "AND l_quantity < 24")) {
      expected.put(((Number) row.get(0)).longValue(), decimal(row.get(1)));
    }
    assertThat(got).isNotEmpty().isEqualTo(expected);
    assertThat(q6.queryExecution().executedPlan().toString()).contains("pushedFilters=[");
  }

  /** How many times each server has answered a DESCRIBE of a sharded dataset (a layout). */
  private static List<Double> layoutsAsked() {
    return meters.stream().map(m -> {
      var counter = m.find("thallus.describes").tag("kind", "shard").counter();
      return counter == null ? 0.0 : counter.count();
    }).toList();
  }

  @Test
  void eachServerIsAskedForTheLayoutOncePerRead() {
    List<Double> before = layoutsAsked();
    Dataset<Row> read = lineitem().filter("l_tax > 0.04").groupBy("l_returnflag").count();
    assertThat(read.collectAsList()).hasSize(3);
    List<Double> after = layoutsAsked();
    for (int i = 0; i < HOSTS.length; i++) {
      assertThat(after.get(i) - before.get(i)).as("layouts asked of server %d by one read", i).isEqualTo(1.0);
    }
    before = after;
    assertThat(spark.sql("SELECT count(*) FROM shardcat.shards.lineitem").collectAsList().get(0).getLong(0))
        .isEqualTo(3L * ROWS_PER_PART);
    after = layoutsAsked();
    for (int i = 0; i < HOSTS.length; i++) {
      assertThat(after.get(i) - before.get(i)).as("layouts asked of server %d by one catalog read", i)
          .isEqualTo(1.0);
    }
  }

  @Test
  void eachPartitionPrefersTheHostOfItsShardsServer() {
    Dataset<Row> read = spark.read().format("thallus").option("url", urls).option("sharded", "lineitem")
        .option("partitions", "2").load();
    List<ThallusInputPartition> partitions = partitions(read.queryExecution().sparkPlan());
    // Two per shard: each shard's file has four row groups.
    assertThat(partitions).hasSize(2 * HOSTS.length);
    for (ThallusInputPartition partition : partitions) {
      int part = Integer.parseInt(partition.conf().dataset().orElseThrow().replace("lineitem/part", ""));
      assertThat(partition.preferredLocations()).containsExactly(HOSTS[part]);
      assertThat(partition.conf().location(partition.server()).host()).isEqualTo(HOSTS[part]);
    }
    assertThat(read.count()).isEqualTo(3L * ROWS_PER_PART);
  }

  @Test
  void theCatalogShowsTheShardedDatasetAsOneTable() throws Exception {
    Row row = spark.sql("SELECT count(*), sum(l_extendedprice) FROM shardcat.shards.lineitem WHERE l_tax > 0.04")
        .collectAsList().get(0);
    List<Object> want = duckdb("SELECT count(*), sum(l_extendedprice) FROM lineitem WHERE l_tax > 0.04").get(0);
    assertThat(row.getLong(0)).isEqualTo(((Number) want.get(0)).longValue());
    assertThat(decimal(row.get(1))).isEqualTo(decimal(want.get(1)));
    assertThatThrownBy(() -> spark.sql("SELECT * FROM shardcat.shards.nothing").collectAsList())
        .hasMessageContaining("nothing");

    // Listed as the servers declare them: the union of their names.
    assertThat(spark.sql("SHOW TABLES IN shardcat.shards").collectAsList()).extracting(r -> r.getString(1))
        .containsExactly("lineitem", "middle");
    assertThat(spark.sql("SHOW NAMESPACES IN shardcat").collectAsList()).extracting(r -> r.getString(0))
        .contains("shards");
    assertThat(spark.sql("DESCRIBE TABLE shardcat.shards.lineitem").collectAsList()).extracting(r -> r.getString(0))
        .containsExactly("l_orderkey", "l_returnflag", "l_linestatus", "l_quantity", "l_extendedprice",
            "l_discount", "l_tax", "l_shipdate");
    assertThat(spark.table("shardcat.shards.lineitem").schema().fieldNames()).hasSize(8);
    // Declared by the second server only: the other two hold none of it.
    Row middle = spark.sql("SELECT count(*), min(l_orderkey) FROM shardcat.shards.middle").collectAsList().get(0);
    assertThat(middle.getLong(0)).isEqualTo(ROWS_PER_PART);
    assertThat(middle.getLong(1)).isEqualTo(ROWS_PER_PART);
    assertThatThrownBy(() -> spark.sql("DROP TABLE shardcat.shards.lineitem").collectAsList())
        .hasMessageContaining("read only");

    // A server that cannot be reached might declare more: the listing fails naming it, never a shorter list.
    String down = "thallus+tcp://127.0.0.1:1";
    spark.conf().set("spark.sql.catalog.downcat", ThallusCatalog.class.getName());
    spark.conf().set("spark.sql.catalog.downcat.url", urls + "," + down);
    assertThatThrownBy(() -> spark.sql("SHOW TABLES IN downcat.shards").collectAsList())
        .hasMessageContaining("cannot list the sharded datasets of server " + down);
  }

  @Test
  void aTaskReadsAReplicaWhenItsPreferredServerIsDownAndFailsNamingThemWhenNoneIsUp() throws Exception {
    List<ThallusServer> holders = new ArrayList<>();
    try {
      for (int i = 0; i < 2; i++) {
        Path root = Files.createDirectories(work.resolve("replica" + i));
        Path dir = Files.createDirectories(root.resolve("part"));
        Files.copy(partDirs.get(0).resolve("data.parquet"), dir.resolve("data.parquet"));
        holders.add(ThallusServer.builder(allocator, Location.of(HOSTS[i], 0),
            DuckDBEngine.builder().filesUnder(root).build()).dataRoot(root).shard("copies", "p0", "part").build()
            .start());
      }
      String both = holders.get(0).getLocation().withTransport("tcp") + "," + holders.get(1).getLocation()
          .withTransport("tcp");
      Dataset<Row> read = spark.read().format("thallus").option("url", both).option("sharded", "copies").load();
      List<ThallusInputPartition> planned = partitions(read.queryExecution().sparkPlan());
      assertThat(planned).singleElement().satisfies(p -> assertThat(p.preferredLocations())
          .containsExactly(HOSTS[0]));
      // Loaded (the layout learned) while both are up, planned into two partitions after the first went down.
      Dataset<Row> split = spark.read().format("thallus").option("url", both).option("sharded", "copies")
          .option("partitions", "2").load();
      holders.get(0).close();
      assertThat(partitions(split.queryExecution().sparkPlan())).hasSize(2);
      assertThat(split.count()).isEqualTo(ROWS_PER_PART);
      long rows = 0;
      try (var reader = ThallusReaderFactory.INSTANCE.createColumnarReader(planned.get(0))) {
        while (reader.next()) {
          rows += reader.get().numRows();
        }
      }
      assertThat(rows).isEqualTo(ROWS_PER_PART);
      holders.get(1).close();
      assertThatThrownBy(() -> ThallusReaderFactory.INSTANCE.createColumnarReader(planned.get(0)))
          .hasMessageContaining("UNAVAILABLE")
          .hasMessageContaining(holders.get(0).getLocation().withTransport("tcp").toString())
          .hasMessageContaining(holders.get(1).getLocation().withTransport("tcp").toString());
    } finally {
      holders.forEach(ThallusServer::close);
    }
    assertThat(Connector.allocatedBytes()).isZero();
  }

  /**
   * The layout is learned once, when the read is loaded: a server that goes down after that fails the query naming
   * it, and once it is back on the same port the same read succeeds, as Spark's retried task does (a new reader of
   * the same partition connects again).
   */
  @Test
  void aReadWhoseServerWentDownAfterPlanningFailsNamingItAndSucceedsOnceItIsBack() throws Exception {
    Path root = Files.createDirectories(work.resolve("restart"));
    Files.createDirectories(root.resolve("part"));
    Files.copy(partDirs.get(2).resolve("data.parquet"), root.resolve("part/data.parquet"));
    ThallusServer first = restartable(root, 0);
    int port = first.getLocation().port();
    String url = first.getLocation().withTransport("tcp").toString();
    ThallusServer back = null;
    try {
      Dataset<Row> read = spark.read().format("thallus").option("url", url).option("sharded", "again").load();
      List<ThallusInputPartition> planned = partitions(read.queryExecution().sparkPlan());
      first.close();
      assertThatThrownBy(read::count).hasMessageContaining("UNAVAILABLE").hasMessageContaining(url);
      assertThatThrownBy(() -> ThallusReaderFactory.INSTANCE.createColumnarReader(planned.get(0)))
          .hasMessageContaining(url);
      // Back on the same port (its old socket may linger a moment: started again until the bind succeeds).
      ThallusServer[] started = new ThallusServer[1];
      io.thallus.testing.Eventually.await("the server to bind port " + port + " again",
          java.time.Duration.ofMinutes(1), () -> {
            if (started[0] != null) {
              return true;
            }
            try {
              started[0] = restartable(root, port);
              return true;
            } catch (RuntimeException bindFailed) {
              return false;
            }
          });
      back = started[0];
      long rows = 0;
      try (var reader = ThallusReaderFactory.INSTANCE.createColumnarReader(planned.get(0))) {
        while (reader.next()) {
          rows += reader.get().numRows();
        }
      }
      assertThat(rows).isEqualTo(ROWS_PER_PART);
      assertThat(read.count()).isEqualTo(ROWS_PER_PART);
    } finally {
      first.close();
      if (back != null) {
        back.close();
      }
    }
    assertThat(Connector.allocatedBytes()).isZero();
  }

  private static ThallusServer restartable(Path root, int port) {
    return ThallusServer.builder(allocator, Location.of(HOSTS[0], port), DuckDBEngine.builder().filesUnder(root)
        .build()).dataRoot(root).shard("again", "p2", "part").build().start();
  }

  private static List<ThallusInputPartition> partitions(SparkPlan plan) {
    List<ThallusInputPartition> found = new ArrayList<>();
    for (SparkPlan leaf : scala.jdk.javaapi.CollectionConverters.asJava(plan.collectLeaves())) {
      if (leaf instanceof BatchScanExec scan) {
        for (InputPartition partition : scala.jdk.javaapi.CollectionConverters.asJava(scan.inputPartitions())) {
          found.add((ThallusInputPartition) partition);
        }
      }
    }
    return found;
  }
}
