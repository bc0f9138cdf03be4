package io.thallus.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.Location;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.util.Optional;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A statement over a sharded dataset ({@code shards.lineitem}) is refused by the real driver before it is sent,
 * with SQLState 0A000 and a message naming the dataset, the reason and what reads it; a literal, a comment or a name
 * the server does not declare is not mistaken for one.
 */
class ShardedRefusalTest {
  @TempDir
  static Path data;

  private static BufferAllocator allocator;
  private static ThallusServer server;
  private static String url;

  @BeforeAll
  static void start() throws Exception {
    allocator = new RootAllocator();
    Files.createDirectories(data.resolve("lineitem/part0"));
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
         Statement statement = duckdb.createStatement()) {
      statement.execute("COPY (SELECT i AS l_orderkey FROM range(100) t(i)) TO '"
          + data.resolve("lineitem/part0/data.parquet") + "' (FORMAT parquet)");
    }
    server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0),
        DuckDBEngine.builder().filesUnder(data).build()).dataRoot(data)
        .shard("lineitem", "p0", "lineitem/part0").build().start();
    url = "jdbc:thallus://127.0.0.1:" + server.getLocation().port();
  }

  @AfterAll
  static void stop() {
    try {
      server.close();
    } finally {
      allocator.close();
    }
  }

  @Test
  void aStatementOverAShardedDatasetIsRefusedNamingItAndWhatReadsIt() throws Exception {
    try (Connection connection = DriverManager.getConnection(url); Statement statement = connection.createStatement()) {
      for (String sql : new String[] {"SELECT count(*) FROM shards.lineitem",
          "select l_orderkey from \"SHARDS\".\"LineItem\" where l_orderkey < 3",
          "SELECT 1 FROM range(3) r JOIN shards . lineitem l ON r.range = l.l_orderkey"}) {
        assertThatThrownBy(() -> statement.executeQuery(sql))
            .isInstanceOf(SQLFeatureNotSupportedException.class)
            .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("0A000"))
            .hasMessageContaining("does not read sharded dataset shards.")
            .hasMessageContaining("its parts live on several servers")
            .hasMessageContaining(server.getLocation().toString())
            .hasMessageContaining("io.thallus.ShardedStream")
            .hasMessageContaining("docs/sharding.md");
      }
      assertThatThrownBy(() -> connection.prepareStatement("SELECT * FROM shards.lineitem WHERE l_orderkey = ?"))
          .isInstanceOf(SQLFeatureNotSupportedException.class).hasMessageContaining("shards.lineitem");
      statement.addBatch("DELETE FROM shards.lineitem");
      assertThatThrownBy(statement::executeBatch).hasMessageContaining("shards.lineitem");

      // Not references: a literal, comments, a name no server declares (the server answers as for any name).
      try (ResultSet rows = statement.executeQuery("SELECT 'shards.lineitem' AS s -- FROM shards.lineitem\n"
          + "/* shards.lineitem */")) {
        assertThat(rows.next()).isTrue();
        assertThat(rows.getString(1)).isEqualTo("shards.lineitem");
      }
      assertThatThrownBy(() -> statement.executeQuery("SELECT * FROM shards.orders"))
          .isInstanceOf(SQLException.class)
          .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isNotEqualTo("0A000"));
      // The files themselves stay readable as a dataset by their path.
      try (ResultSet rows = statement.executeQuery("SELECT count(*) FROM read_parquet('"
          + data.resolve("lineitem/part0/data.parquet") + "')")) {
        assertThat(rows.next()).isTrue();
        assertThat(rows.getLong(1)).isEqualTo(100);
      }
    }
  }

  @Test
  void referencesAreFoundOutsideLiteralsAndComments() {
    Set<String> declared = Set.of("lineitem");
    assertThat(ShardedRefusal.reference("SELECT * FROM shards.lineitem", declared)).contains("lineitem");
    assertThat(ShardedRefusal.reference("SELECT * FROM Shards.\"LINEITEM\"", declared)).contains("LINEITEM");
    assertThat(ShardedRefusal.reference("SELECT $$ shards.lineitem $$, $t$x$t$ FROM t", declared)).isEmpty();
    assertThat(ShardedRefusal.reference("SELECT 'it''s shards.lineitem' FROM t", declared)).isEmpty();
    assertThat(ShardedRefusal.reference("SELECT \"shards.lineitem\" FROM t", declared)).isEmpty();
    assertThat(ShardedRefusal.reference("SELECT * FROM db.shards.lineitem", declared)).isEmpty();
    assertThat(ShardedRefusal.reference("SELECT * FROM shards.orders", declared)).isEmpty();
    assertThat(ShardedRefusal.reference("/* unclosed shards.lineitem", declared)).isEmpty();
    assertThat(ShardedRefusal.reference("SELECT 1.5, x FROM a /* c */ JOIN shards.lineitem", declared))
        .isEqualTo(Optional.of("lineitem"));
  }
}
