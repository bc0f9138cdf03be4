package io.thallus.sharding;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.DatasetDescription;
import io.thallus.DatasetDescription.FilePart;
import io.thallus.Location;
import io.thallus.ShardedDataset;
import io.thallus.ShardedStream;
import io.thallus.StatusCode;
import io.thallus.ThallusClient;
import io.thallus.ThallusException;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Parquet dataset spread over three real servers in one JVM, each with its own data root holding its share, one
 * file replicated on two of them: a sharded read's rows equal DuckDB's over all the files at once, each file read
 * once; a file of one name and different contents fails naming both servers; a server that is down fails the read
 * naming it unless a live server holds a replica of everything it was to read.
 */
class ShardedReadTest {
  @TempDir
  static Path roots;

  private static final String DATASET = "lineitem";
  /** A filter and a projection, with expressions, as a sharded read runs them on each server. */
  private static final String QUERY = "SELECT id, k, x * 2 AS x2, v FROM dataset WHERE k <> 3 AND id % 2 = 0";
  private static BufferAllocator allocator;
  private static final List<ThallusServer> servers = new ArrayList<>();
  private static Path root1;
  private static Path root2;
  private static Path root3;

  @BeforeAll
  static void writeSharesAndStart() throws Exception {
    root1 = Files.createDirectories(roots.resolve("one/lineitem"));
    root2 = Files.createDirectories(roots.resolve("two/lineitem/sub"));
    root3 = Files.createDirectories(roots.resolve("three/lineitem"));
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = duckdb.createStatement()) {
      statement.execute("CREATE TABLE t AS SELECT i AS id, (i % 13)::INTEGER AS k, (i * 0.5)::DOUBLE AS x, md5(i::VARCHAR) AS v "
          + "FROM range(300000) r(i)");
      write(statement, "id < 10000", root1.resolve("p0.parquet"));
      write(statement, "id >= 10000 AND id < 20000", root1.resolve("p1.parquet"));
      write(statement, "id >= 20000 AND id < 30000", roots.resolve("two/lineitem/p2.parquet"));
      write(statement, "id >= 30000 AND id < 40000", root2.resolve("p3.parquet"));
      write(statement, "id >= 40000 AND id < 60000", root3.resolve("p4.parquet"));
      // The replicated file: large enough that its checksum covers size and Parquet footer, not the whole file.
      write(statement, "id >= 60000", root1.resolve("r.parquet"));
    }
    Files.copy(root1.resolve("r.parquet"), root3.resolve("r.parquet"));
    for (String root : List.of("one", "two", "three")) {
      servers.add(start(roots.resolve(root)));
    }
    allocator = new RootAllocator();
  }

  private static void write(Statement statement, String where, Path file) throws Exception {
    statement.execute("COPY (SELECT * FROM t WHERE " + where + " ORDER BY id) TO '" + file
        + "' (FORMAT parquet, ROW_GROUP_SIZE 8192)");
  }

  private static ThallusServer start(Path root) {
    return ThallusServer.builder(new RootAllocator(), Location.of("127.0.0.1", 0),
        DuckDBEngine.builder().filesUnder(root).build()).dataRoot(root).build().start();
  }

  @AfterAll
  static void stop() {
    servers.forEach(ThallusServer::close);
    allocator.close();
  }

  private static List<Location> locations(ThallusServer... chosen) {
    return Arrays.stream(chosen).map(ThallusServer::getLocation).toList();
  }

  /** Count, sums and the sorted ids of QUERY's rows: what the read and DuckDB are compared by. */
  private record Figures(long rows, long sumK, double sumX2, long sumLengthV, long[] ids) {
    @Override
    public boolean equals(Object o) {
      return o instanceof Figures f && rows == f.rows && sumK == f.sumK && sumX2 == f.sumX2
          && sumLengthV == f.sumLengthV && Arrays.equals(ids, f.ids);
    }

    @Override
    public int hashCode() {
      return Long.hashCode(rows);
    }

    @Override
    public String toString() {
      return "rows " + rows + ", sum(k) " + sumK + ", sum(x2) " + sumX2 + ", sum(length(v)) " + sumLengthV;
    }
  }

  private static Figures read(ShardedStream stream) {
    List<Long> ids = new ArrayList<>();
    long sumK = 0;
    double sumX2 = 0;
    long sumLength = 0;
    while (stream.hasNext()) {
      try (VectorSchemaRoot root = stream.next()) {
        BigIntVector id = (BigIntVector) root.getVector("id");
        IntVector k = (IntVector) root.getVector("k");
        Float8Vector x2 = (Float8Vector) root.getVector("x2");
        VarCharVector v = (VarCharVector) root.getVector("v");
        for (int i = 0; i < root.getRowCount(); i++) {
          ids.add(id.get(i));
          sumK += k.get(i);
          sumX2 += x2.get(i);
          sumLength += v.get(i).length;
        }
      }
    }
    long[] sorted = ids.stream().mapToLong(Long::longValue).sorted().toArray();
    return new Figures(sorted.length, sumK, sumX2, sumLength, sorted);
  }

  /** QUERY run by DuckDB directly over {@code files}, all at once. */
  private static Figures duckdb(List<Path> files) throws Exception {
    String list = files.stream().map(f -> "'" + f + "'").collect(Collectors.joining(", ", "[", "]"));
    String source = "(" + QUERY.replace("dataset", "read_parquet(" + list + ")") + ")";
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = duckdb.createStatement()) {
      long rows;
      long sumK;
      double sumX2;
      long sumLength;
      try (ResultSet result = statement.executeQuery("SELECT count(*), sum(k), sum(x2), sum(length(v)) FROM "
          + source)) {
        result.next();
        rows = result.getLong(1);
        sumK = result.getLong(2);
        sumX2 = result.getDouble(3);
        sumLength = result.getLong(4);
      }
      long[] ids = new long[(int) rows];
      try (ResultSet result = statement.executeQuery("SELECT id FROM " + source + " ORDER BY id")) {
        int i = 0;
        while (result.next()) {
          ids[i++] = result.getLong(1);
        }
      }
      return new Figures(rows, sumK, sumX2, sumLength, ids);
    }
  }

  private static List<Path> allFiles() {
    return List.of(root1.resolve("p0.parquet"), root1.resolve("p1.parquet"), roots.resolve("two/lineitem/p2.parquet"),
        root2.resolve("p3.parquet"), root3.resolve("p4.parquet"), root1.resolve("r.parquet"));
  }

  @Test
  void describeGivesEachFileItsIdAndChecksum() throws Exception {
    try (ThallusClient client = ThallusClient.connect(allocator, servers.get(1).getLocation())) {
      DatasetDescription description = client.describe("dataset", DATASET);
      assertThat(description.parts()).extracting(part -> ((FilePart) part).id())
          .containsExactly("lineitem/p2.parquet", "lineitem/sub/p3.parquet");
      FilePart p2 = (FilePart) description.parts().get(0);
      assertThat(Files.size(roots.resolve("two/lineitem/p2.parquet"))).isLessThanOrEqualTo(1 << 20);
      assertThat(p2.checksum()).isEqualTo(sha256(roots.resolve("two/lineitem/p2.parquet"), false));
    }
    try (ThallusClient one = ThallusClient.connect(allocator, servers.get(0).getLocation());
         ThallusClient three = ThallusClient.connect(allocator, servers.get(2).getLocation())) {
      FilePart r1 = file(one.describe("dataset", DATASET), "lineitem/r.parquet");
      FilePart r3 = file(three.describe("dataset", DATASET), "lineitem/r.parquet");
      assertThat(r1.bytes()).isGreaterThan(1 << 20);
      assertThat(r1.checksum()).isEqualTo(r3.checksum()).isEqualTo(sha256(root1.resolve("r.parquet"), true));
      assertThat(r1.path()).isNotEqualTo(r3.path());
    }
  }

  private static FilePart file(DatasetDescription description, String id) {
    return description.parts().stream().map(FilePart.class::cast).filter(f -> f.id().equals(id)).findFirst()
        .orElseThrow();
  }

  /** The checksum as docs/sharding.md defines it, computed here independently of the server. */
  private static String sha256(Path file, boolean footerOnly) throws Exception {
    byte[] bytes = Files.readAllBytes(file);
    MessageDigest digest = MessageDigest.getInstance("SHA-256");
    digest.update(ByteBuffer.allocate(8).putLong(bytes.length).array());
    if (footerOnly) {
      int footer = ByteBuffer.wrap(bytes, bytes.length - 8, 4).order(ByteOrder.LITTLE_ENDIAN).getInt() + 8;
      digest.update(bytes, bytes.length - footer, footer);
    } else {
      digest.update(bytes);
    }
    return HexFormat.of().formatHex(digest.digest());
  }

  @Test
  void rowsEqualDuckDBOverAllFilesAndReplicasAreReadOnce() throws Exception {
    try (ShardedDataset dataset = ShardedDataset.open(allocator, locations(servers.get(0), servers.get(1),
        servers.get(2)), DATASET)) {
      Location one = servers.get(0).getLocation();
      Location three = servers.get(2).getLocation();
      assertThat(dataset.parts()).containsEntry("lineitem/r.parquet", List.of(one, three)).hasSize(6);
      try (ShardedStream stream = dataset.query(QUERY)) {
        assertThat(read(stream)).isEqualTo(duckdb(allFiles()));
        Map<String, Location> readFrom = stream.reads().stream()
            .collect(Collectors.toMap(ShardedStream.PartRead::id, ShardedStream.PartRead::server));
        assertThat(stream.reads()).hasSize(6);
        assertThat(readFrom).containsEntry("lineitem/r.parquet", one).containsEntry("lineitem/p4.parquet", three)
            .containsEntry("lineitem/sub/p3.parquet", servers.get(1).getLocation());
      }
      // Parameters reach every server; SELECT * keeps the described schema.
      try (ShardedStream stream = dataset.query("SELECT * FROM dataset d WHERE d.id < ?", List.of(15_000L))) {
        assertThat(stream.getSchema()).isEqualTo(dataset.schema());
        long rows = 0;
        while (stream.hasNext()) {
          try (VectorSchemaRoot root = stream.next()) {
            rows += root.getRowCount();
          }
        }
        assertThat(rows).isEqualTo(15_000);
      }
    }
  }

  @Test
  void oneIdOfDifferentContentsFailsNamingBothServers() throws Exception {
    Path other = Files.createDirectories(roots.resolve("conflict/lineitem"));
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = duckdb.createStatement()) {
      // The same rows but one value: the same schema, another file.
      statement.execute("COPY (SELECT i AS id, (i % 13)::INTEGER AS k, (i * 0.5)::DOUBLE AS x, "
          + "CASE WHEN i = 70000 THEN 'changed' ELSE md5(i::VARCHAR) END AS v FROM range(60000, 300000) r(i)) TO '"
          + other.resolve("r.parquet") + "' (FORMAT parquet, ROW_GROUP_SIZE 8192)");
    }
    try (ThallusServer conflicting = start(roots.resolve("conflict"))) {
      assertThatThrownBy(() -> ShardedDataset.open(allocator, locations(servers.get(0), conflicting), DATASET))
          .isInstanceOfSatisfying(ThallusException.class,
              e -> assertThat(e.code()).isEqualTo(StatusCode.FAILED_PRECONDITION))
          .hasMessageContaining("lineitem/r.parquet")
          .hasMessageContaining(servers.get(0).getLocation().toString())
          .hasMessageContaining(conflicting.getLocation().toString());
    }
  }

  @Test
  void aServerDownAtOpenFailsNamingIt() {
    ThallusServer gone = start(roots.resolve("three"));
    Location location = gone.getLocation();
    gone.close();
    assertThatThrownBy(() -> ShardedDataset.open(allocator, List.of(servers.get(0).getLocation(), location),
        DATASET))
        .isInstanceOfSatisfying(ThallusException.class, e -> assertThat(e.code()).isEqualTo(StatusCode.UNAVAILABLE))
        .hasMessageContaining(location.toString());
  }

  @Test
  void aServerDownWithEveryFileReplicatedIsReadAround() throws Exception {
    Path onlyReplica = Files.createDirectories(roots.resolve("four/lineitem"));
    Files.copy(root1.resolve("r.parquet"), onlyReplica.resolve("r.parquet"));
    ThallusServer four = start(roots.resolve("four"));
    try (ShardedDataset dataset = ShardedDataset.open(allocator, locations(four, servers.get(1), servers.get(2)),
        DATASET)) {
      assertThat(dataset.placement().get(four.getLocation())).containsExactly("lineitem/r.parquet");
      four.close();
      try (ShardedStream stream = dataset.query(QUERY)) {
        assertThat(read(stream)).isEqualTo(duckdb(List.of(roots.resolve("two/lineitem/p2.parquet"),
            root2.resolve("p3.parquet"), root3.resolve("p4.parquet"), root3.resolve("r.parquet"))));
        assertThat(stream.reads()).contains(new ShardedStream.PartRead("lineitem/r.parquet",
            servers.get(2).getLocation(), stream.reads().stream().filter(r -> r.id().equals("lineitem/r.parquet"))
                .findFirst().orElseThrow().rows()));
      }
      assertThat(dataset.placement()).doesNotContainKey(four.getLocation());
    } finally {
      four.close();
    }
  }

  @Test
  void aServerDownHoldingAFileNoOneElseHasFailsNamingIt() {
    ThallusServer two = start(roots.resolve("two"));
    try (ShardedDataset dataset = ShardedDataset.open(allocator, locations(servers.get(0), two, servers.get(2)),
        DATASET)) {
      two.close();
      assertThatThrownBy(() -> {
        try (ShardedStream stream = dataset.query(QUERY)) {
          read(stream);
        }
      }).isInstanceOfSatisfying(ThallusException.class, e -> assertThat(e.code()).isEqualTo(StatusCode.UNAVAILABLE))
          .hasMessageContaining(two.getLocation().toString())
          .hasMessageContaining("lineitem/p2.parquet");
    } finally {
      two.close();
    }
  }

  @Test
  void queriesThatNeedMergingAreRefused() throws Exception {
    List<String> refused = new ArrayList<>(List.of(
        "SELECT count(*) FROM dataset",
        "SELECT k, sum(x) FROM dataset GROUP BY k",
        "SELECT DISTINCT k FROM dataset",
        "SELECT id FROM dataset ORDER BY id",
        "SELECT id FROM dataset LIMIT 5",
        "SELECT id, row_number() OVER () FROM dataset",
        "SELECT a.id FROM dataset a JOIN dataset b ON a.id = b.id",
        "SELECT id FROM dataset, dataset b",
        "SELECT id FROM dataset UNION ALL SELECT id FROM dataset",
        "SELECT id FROM dataset WHERE id IN (SELECT 1)",
        "WITH d AS (SELECT * FROM dataset) SELECT * FROM d",
        "SELECT * FROM read_parquet('lineitem/p0.parquet')",
        "SELECT 1",
        "SELECT \"sum\"(x) FROM dataset",
        "SELECT id FROM dataset; DROP TABLE t",
        "DELETE FROM dataset"));
    // Every aggregate DuckDB has.
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = duckdb.createStatement();
         ResultSet names = statement.executeQuery("SELECT DISTINCT function_name FROM duckdb_functions() "
             + "WHERE function_type = 'aggregate'")) {
      while (names.next()) {
        refused.add("SELECT " + names.getString(1) + "(x) FROM dataset");
      }
    }
    assertThat(refused).hasSizeGreaterThan(50);
    try (ShardedDataset dataset = ShardedDataset.open(allocator, locations(servers.get(0), servers.get(1)),
        DATASET)) {
      for (String sql : refused) {
        assertThatThrownBy(() -> dataset.query(sql)).as(sql)
            .isInstanceOfSatisfying(ThallusException.class,
                e -> assertThat(e.code()).isEqualTo(StatusCode.INVALID_ARGUMENT))
            .hasMessageContaining("sharded read");
      }
      // Words of the list inside strings, quoted names and comments are not the query's.
      try (ShardedStream stream = dataset.query("SELECT id /* order by */, 'group by' AS \"limit\" FROM dataset "
          + "-- count(*)\n WHERE v <> 'sum(x)' AND id < 3;")) {
        long rows = 0;
        while (stream.hasNext()) {
          try (VectorSchemaRoot root = stream.next()) {
            rows += root.getRowCount();
          }
        }
        assertThat(rows).isEqualTo(3);
      }
    }
  }
}
