package io.thallus.spark;

import io.thallus.Location;
import io.thallus.ShardLayout;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.spark.sql.connector.read.InputPartition;

/**
 * Plans the reads of a sharded dataset (docs/sharding.md). On the driver, {@link #resolve} asks every server which
 * parts it holds ({@link ShardLayout#discover}) and makes the read look like a read of its first shard: schema,
 * pushdown and estimates are asked of that shard's server, and the read is marked as several streams, so Spark's
 * planner keeps a final aggregation (each shard answers a partial aggregate; COUNT/SUM DISTINCT are not pushed).
 * {@link #plan} then asks the servers again and gives each shard {@code partitions} partitions (by its Parquet row
 * groups), each preferring the host of the shard's first holder and able to fall back to its replicas.
 */
final class ShardedReads {
  private ShardedReads() {}

  /** A sharded read made ready for planning; any other read as it is. */
  static ReadConf resolve(ReadConf conf) {
    Optional<ShardedSource> sharded = conf.sharded();
    if (sharded.isEmpty() || sharded.get().shards() > 0) {
      return conf;
    }
    ShardLayout layout = discover(conf, sharded.get());
    if (layout.shards().isEmpty()) {
      throw ThallusException.of(StatusCode.NOT_FOUND, "no server declares a part of sharded dataset "
          + sharded.get().name());
    }
    ShardLayout.Shard first = layout.shards().get(0);
    // Several streams, whatever the partitions per shard: the scan never gives a final aggregate or a join.
    int streams = Math.max(2, layout.shards().size() * sharded.get().partitionsPerShard());
    return conf.forShards(urls(first), first.holders().get(0).dataset(), streams,
        sharded.get().withShards(layout.shards().size()));
  }

  /** The partitions of a resolved sharded read running {@code query}: per shard, its partitions. */
  static InputPartition[] plan(ReadConf conf, ScanQuery query) {
    ShardedSource sharded = conf.sharded().orElseThrow();
    ShardLayout layout = discover(conf, sharded);
    List<InputPartition> planned = new ArrayList<>();
    for (ShardLayout.Shard shard : layout.shards()) {
      ReadConf shardConf = conf.forShards(urls(shard), shard.holders().get(0).dataset(),
          sharded.partitionsPerShard(), null);
      for (PartitionSpec spec : Partitioner.plan(shardConf)) {
        String exact = query.sql(spec);
        Optional<String> narrow = query.narrowSql(spec);
        planned.add(new ThallusInputPartition(shardConf, 0, narrow.orElse(exact), narrow.isPresent() ? exact : null,
            query.readSchema().size(), shardConf.location(0).host()));
      }
    }
    return planned.toArray(InputPartition[]::new);
  }

  /** The namespace of a catalog's sharded datasets: {@code thallus.shards.lineitem}. */
  static final String NAMESPACE = "shards";

  static boolean isShardNamespace(String[] namespace) {
    return namespace.length == 1 && namespace[0].equalsIgnoreCase(NAMESPACE);
  }

  /** Sharded dataset {@code name} of the catalog's servers, as one table named {@code tableName}. */
  static ThallusTable table(ReadConf catalog, String name, String tableName) {
    ReadConf read = resolve(catalog.forShards(catalog.urls(), null, catalog.partitions(),
        ShardedSource.of(name, catalog.urls(), catalog.partitions())));
    try (io.thallus.ThallusClient client = Connector.connect(read, 0)) {
      return new ThallusTable(read, TypeMapping.columns(client.schema(Connector.request(read, read.baseSql()))
          .getFields()), null, tableName);
    }
  }

  /** Rows estimated for the first shard, for all of them. */
  static java.util.OptionalLong scale(ReadConf conf, java.util.OptionalLong firstShardRows) {
    if (conf.sharded().isEmpty() || firstShardRows.isEmpty()) {
      return firstShardRows;
    }
    return java.util.OptionalLong.of(firstShardRows.getAsLong() * Math.max(1, conf.sharded().get().shards()));
  }

  private static ShardLayout discover(ReadConf conf, ShardedSource sharded) {
    List<Location> servers = new ArrayList<>();
    for (String url : sharded.servers()) {
      servers.add(Location.parse(url)); // as the read names them: the transport option applies when a task connects
    }
    return ShardLayout.discover(Connector.allocator(), servers, sharded.name(), conf.clientOptions());
  }

  /**
   * The servers a shard is read from, its first holder first: the holders that read it by the same path (a task
   * that falls back to a replica runs the same SQL, the same dataset path).
   */
  private static List<String> urls(ShardLayout.Shard shard) {
    String path = shard.holders().get(0).dataset();
    return shard.holders().stream().filter(h -> h.dataset().equals(path))
        .map(h -> h.server().toString()).toList();
  }
}
