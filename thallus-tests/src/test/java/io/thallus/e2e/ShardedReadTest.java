package io.thallus.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.ClientOptions;
import io.thallus.DatasetDescription;
import io.thallus.Location;
import io.thallus.ShardLayout;
import io.thallus.ShardedQuery;
import io.thallus.ShardedStream;
import io.thallus.StatusCode;
import io.thallus.ThallusClient;
import io.thallus.ThallusException;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Sharded reads through the Java API against real servers (several in this JVM, each with its own data root and
 * DuckDB): the layout the servers declare, the merged rows compared with DuckDB run over all the parts' files at
 * once, replicas used when a holder is down, and the errors for a part no server can serve, a part id with two
 * contents, and bad declarations.
 */
class ShardedReadTest {
  @TempDir
  static Path work;

  private static final int PARTS = 3;
  private static final int ROWS_PER_PART = 40_000;
  private static BufferAllocator allocator;
  private static final List<ThallusServer> servers = new ArrayList<>();
  private static ShardLayout layout;

  /** Part i's directory under {@code root}, holding two Parquet files of a lineitem-like table. */
  static void writePart(Path root, int part) throws Exception {
    Path dir = root.resolve("lineitem/part" + part);
    Files.createDirectories(dir);
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = duckdb.createStatement()) {
      for (int file = 0; file < 2; file++) {
        long from = (long) part * ROWS_PER_PART + (long) file * ROWS_PER_PART / 2;
        statement.execute("COPY (SELECT i AS l_orderkey, ['A','N','R'][1 + i % 3] AS l_returnflag, "
            + "['F','O'][1 + i % 2] AS l_linestatus, (1 + i % 50)::DECIMAL(15,2) AS l_quantity, "
            + "((i % 9973) * 1.37)::DECIMAL(15,2) AS l_extendedprice, ((i % 11) / 100)::DECIMAL(15,2) AS l_discount, "
            + "DATE '1992-01-01' + (i % 2500)::INTEGER AS l_shipdate FROM range(" + from + ", "
            + (from + ROWS_PER_PART / 2) + ") t(i)) TO '" + dir.resolve("f" + file + ".parquet")
            + "' (FORMAT parquet, ROW_GROUP_SIZE 8192)");
      }
    }
  }

  static ThallusServer serve(Path root, String... idAndPath) {
    ThallusServer.Builder builder = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0),
        DuckDBEngine.builder().filesUnder(root).build()).dataRoot(root);
    for (int i = 0; i < idAndPath.length; i += 2) {
      builder.shard("lineitem", idAndPath[i], idAndPath[i + 1]);
    }
    return builder.build().start();
  }

  @BeforeAll
  static void start() throws Exception {
    allocator = new RootAllocator();
    // Three servers: a holds parts 0 and 1, b a copy of part 1 and part 2, c a copy of part 2.
    Path a = Files.createDirectories(work.resolve("a"));
    Path b = Files.createDirectories(work.resolve("b"));
    Path c = Files.createDirectories(work.resolve("c"));
    writePart(a, 0);
    writePart(a, 1);
    writePart(b, 1);
    writePart(b, 2);
    writePart(c, 2);
    servers.add(serve(a, "p0", "lineitem/part0", "p1", "lineitem/part1"));
    servers.add(serve(b, "p1", "lineitem/part1", "p2", "lineitem/part2"));
    servers.add(serve(c, "p2", "lineitem/part2/*.parquet"));
    layout = ShardLayout.discover(allocator, servers.stream().map(ThallusServer::getLocation).toList(), "lineitem",
        ClientOptions.defaults());
  }

  @AfterAll
  static void stop() {
    servers.forEach(ThallusServer::close);
    allocator.close();
  }

  /** DuckDB's own count, sum of keys and sum of prices over every part's files once, where {@code where} holds. */
  static Object[] duckdb(String where) throws Exception {
    String files = "['" + work.resolve("a/lineitem/part0") + "/*.parquet', '" + work.resolve("a/lineitem/part1")
        + "/*.parquet', '" + work.resolve("b/lineitem/part2") + "/*.parquet']";
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = duckdb.createStatement();
         ResultSet rows = statement.executeQuery("SELECT count(*), sum(l_orderkey), sum(l_extendedprice) FROM "
             + "read_parquet(" + files + ") WHERE " + where)) {
      rows.next();
      return new Object[] {rows.getLong(1), rows.getLong(2), rows.getBigDecimal(3)};
    }
  }

  /** Count, sum of keys and sum of prices of what the sharded read returns; every key must come once. */
  static Object[] read(ShardLayout layout, ShardedQuery query) {
    long count = 0;
    long keys = 0;
    BigDecimal prices = BigDecimal.ZERO.setScale(2);
    Set<Long> seen = new HashSet<>();
    try (ShardedStream rows = ShardedStream.open(allocator, layout, query, ClientOptions.defaults())) {
      while (rows.hasNext()) {
        VectorSchemaRoot batch = rows.next();
        BigIntVector key = (BigIntVector) batch.getVector("l_orderkey");
        DecimalVector price = (DecimalVector) batch.getVector("l_extendedprice");
        for (int i = 0; i < batch.getRowCount(); i++) {
          assertThat(seen.add(key.get(i))).as("key %d read once", key.get(i)).isTrue();
          keys += key.get(i);
          prices = prices.add(price.getObject(i));
        }
        count += batch.getRowCount();
      }
    }
    return new Object[] {count, keys, prices};
  }

  @Test
  void theServersDeclareTheirPartsAndReplicasShareOneChecksum() throws Exception {
    try (ThallusClient client = ThallusClient.connect(allocator, servers.get(0).getLocation())) {
      DatasetDescription description = client.describe("lineitem");
      assertThat(description.kind()).isEqualTo(DatasetDescription.Kind.SHARD);
      assertThat(description.parts()).extracting(p -> ((DatasetDescription.ShardPart) p).id())
          .containsExactly("p0", "p1");
      assertThat(description.parts()).allSatisfy(p -> assertThat(p.rows()).isEqualTo(ROWS_PER_PART));
      DatasetDescription.ShardPart p0 = (DatasetDescription.ShardPart) description.parts().get(0);
      assertThat(p0.dataset()).isEqualTo("lineitem/part0");
      assertThat(p0.bytes()).isEqualTo(Files.size(work.resolve("a/lineitem/part0/f0.parquet"))
          + Files.size(work.resolve("a/lineitem/part0/f1.parquet")));
    }
    assertThat(layout.shards()).extracting(ShardLayout.Shard::partId).containsExactly("p0", "p1", "p2");
    assertThat(layout.shards().get(1).holders()).extracting(ShardLayout.Holder::server)
        .containsExactly(servers.get(0).getLocation(), servers.get(1).getLocation());
    assertThat(layout.shards().get(2).holders()).hasSize(2);
    assertThat(layout.rows()).isEqualTo((long) PARTS * ROWS_PER_PART);
  }

  @Test
  void aShardedReadEqualsDuckDBOverAllTheFiles() throws Exception {
    assertThat(read(layout, ShardedQuery.all())).containsExactly(duckdb("true"));
    assertThat(read(layout, ShardedQuery.all().columns(List.of("l_orderkey", "l_extendedprice"))
        .filter("l_shipdate >= DATE '1994-01-01' AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24")))
        .containsExactly(duckdb("l_shipdate >= DATE '1994-01-01' AND l_discount BETWEEN 0.05 AND 0.07 "
            + "AND l_quantity < 24"));
  }

  @Test
  void aReplicaServesAPartWhoseFirstHolderIsDown() throws Exception {
    Path x = Files.createDirectories(work.resolve("x"));
    Path y = Files.createDirectories(work.resolve("y"));
    writePart(x, 0);
    writePart(y, 0);
    ThallusServer first = serve(x, "p0", "lineitem/part0");
    try (ThallusServer second = serve(y, "p0", "lineitem/part0")) {
      ShardLayout two = ShardLayout.discover(allocator, List.of(first.getLocation(), second.getLocation()),
          "lineitem", ClientOptions.defaults());
      assertThat(two.shards()).singleElement().satisfies(s -> assertThat(s.holders()).hasSize(2));
      first.close();
      try (ShardedStream rows = ShardedStream.open(allocator, two, ShardedQuery.all(), ClientOptions.defaults())) {
        assertThat(rows.servedBy()).containsEntry("p0", second.getLocation());
      }
      assertThat(read(two, ShardedQuery.all())).containsExactly(duckdb("l_orderkey < " + ROWS_PER_PART));
    } finally {
      first.close();
    }
  }

  @Test
  void aPartWhoseOnlyServerIsDownFailsTheReadNamingIt() throws Exception {
    Path z = Files.createDirectories(work.resolve("z"));
    writePart(z, 0);
    ThallusServer only = serve(z, "p0", "lineitem/part0");
    Location where = only.getLocation();
    ShardLayout one = ShardLayout.discover(allocator, List.of(where), "lineitem", ClientOptions.defaults());
    only.close();
    assertThatThrownBy(() -> read(one, ShardedQuery.all()))
        .isInstanceOf(ThallusException.class)
        .hasMessageContaining("part p0 of sharded dataset lineitem cannot be read")
        .hasMessageContaining(where.toString())
        .satisfies(e -> assertThat(((ThallusException) e).code()).isEqualTo(StatusCode.UNAVAILABLE));
    assertThatThrownBy(() -> ShardLayout.discover(allocator, List.of(servers.get(0).getLocation(), where),
        "lineitem", ClientOptions.defaults()))
        .hasMessageContaining("cannot learn which parts of sharded dataset lineitem server " + where);
  }

  @Test
  void onePartIdWithTwoContentsFailsNamingBothServers() throws Exception {
    Path w = Files.createDirectories(work.resolve("w"));
    writePart(w, 2);
    // Part 2's rows declared as p1: the id matches server a's p1, the contents do not.
    try (ThallusServer wrong = serve(w, "p1", "lineitem/part2")) {
      assertThatThrownBy(() -> ShardLayout.discover(allocator, List.of(servers.get(0).getLocation(),
          wrong.getLocation()), "lineitem", ClientOptions.defaults()))
          .hasMessageContaining("part p1 of sharded dataset lineitem differs between servers "
              + servers.get(0).getLocation())
          .hasMessageContaining("and " + wrong.getLocation());
    }
  }

  @Test
  void declarationsAndQueriesAreChecked() throws Exception {
    Path v = Files.createDirectories(work.resolve("v"));
    assertThatThrownBy(() -> serve(v, "p0", "../a/lineitem/part0")).hasMessageContaining("outside the data root");
    assertThatThrownBy(() -> serve(v, "p0", "missing")).hasMessageContaining("does not exist");
    assertThatThrownBy(() -> serve(v, "p 0", "x")).hasMessageContaining("part id 'p 0'");
    assertThatThrownBy(() -> ThallusServer.builder(allocator, Location.of("127.0.0.1", 0),
        DuckDBEngine.builder().build()).shard("line item", "p0", "x"))
        .hasMessageContaining("sharded dataset name 'line item'");
    assertThatThrownBy(() -> ShardedQuery.all().filter("l_quantity > (SELECT avg(l_quantity) FROM dataset)"))
        .hasMessageContaining("cannot hold a subquery");
    assertThat(ShardedQuery.all().filter("l_returnflag <> 'select'").filter()).isPresent();
    // An aggregate in the filter is refused by the server (DuckDB allows none in WHERE).
    assertThatThrownBy(() -> read(layout, ShardedQuery.all().filter("sum(l_quantity) > 3")))
        .isInstanceOf(ThallusException.class);
    try (ThallusServer plain = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0),
        DuckDBEngine.builder().filesUnder(v).build()).dataRoot(v).build().start()) {
      assertThatThrownBy(() -> ShardLayout.discover(allocator, List.of(plain.getLocation()), "lineitem",
          ClientOptions.defaults())).hasMessageContaining("no server of [" + plain.getLocation()
          + "] declares a part of sharded dataset lineitem")
          .satisfies(e -> assertThat(((ThallusException) e).code()).isEqualTo(StatusCode.NOT_FOUND));
    }
  }

  @Test
  void eachServerListsTheShardedDatasetsItDeclares() throws Exception {
    Path u = Files.createDirectories(work.resolve("u"));
    writePart(u, 0);
    try (ThallusServer two = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0),
            DuckDBEngine.builder().filesUnder(u).build()).dataRoot(u)
            .shard("orders", "o0", "lineitem/part0/f0.parquet").shard("lineitem", "p0", "lineitem/part0")
            .shard("Orders", "o1", "lineitem/part0/f1.parquet").build().start();
         ThallusServer plain = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0),
            DuckDBEngine.builder().filesUnder(u).build()).dataRoot(u).build().start();
         ThallusClient client = ThallusClient.connect(allocator, two.getLocation());
         ThallusClient none = ThallusClient.connect(allocator, plain.getLocation())) {
      // In declaration order, each name once, as first declared.
      assertThat(client.shardedDatasets()).containsExactly("orders", "lineitem");
      assertThat(client.describe("ORDERS").parts()).hasSize(2);
      assertThat(none.shardedDatasets()).isEmpty();
      // A server that declares no part of the name holds none of it: the others' parts make the layout.
      ShardLayout withPlain = ShardLayout.discover(allocator, List.of(plain.getLocation(), two.getLocation()),
          "orders", ClientOptions.defaults());
      assertThat(withPlain.shards()).extracting(ShardLayout.Shard::partId).containsExactly("o0", "o1");
      assertThat(withPlain.shards()).allSatisfy(shard -> assertThat(shard.holders())
          .extracting(ShardLayout.Holder::server).containsExactly(two.getLocation()));
      assertThat(withPlain.rows()).isEqualTo(ROWS_PER_PART);
    }
  }
}
