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
 * parts it holds ({@link ShardLayout#discover}), once per read: where each shard is read is kept in the read's
 * {@link ShardedSource}, and the read is made to look like a read of its first shard: schema, pushdown and estimates
 * are asked of that shard's server, and the read is marked as several streams, so Spark's planner keeps a final
 * aggregation (each shard answers a partial aggregate; COUNT/SUM DISTINCT are not pushed). {@link #plan} gives each
 * shard {@code partitions} partitions (by its Parquet row groups) from the layout learned then, each preferring the
 * host of the shard's first holder and able to fall back to its replicas. A server that goes down after that fails
 * (or falls back to a replica in) the task that connects to it, naming it, as when it goes down while tasks run.
 */
final class ShardedReads {
  private ShardedReads() {}

  /** A sharded read made ready for planning; any other read, or one resolved already, as it is. */
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
    List<ShardedSource.Site> sites = layout.shards().stream().map(ShardedReads::site).toList();
    ShardedSource.Site first = sites.get(0);
    // Several streams, whatever the partitions per shard: the scan never gives a final aggregate or a join.
    int streams = Math.max(2, sites.size() * sharded.get().partitionsPerShard());
    return conf.forShards(first.urls(), first.dataset(), streams, sharded.get().withSites(sites));
  }

  /** The partitions of a resolved sharded read running {@code query}: per shard, its partitions. */
  static InputPartition[] plan(ReadConf conf, ScanQuery query) {
    ShardedSource sharded = conf.sharded().orElseThrow();
    List<InputPartition> planned = new ArrayList<>();
    for (ShardedSource.Site site : sharded.sites()) {
      ReadConf shardConf = conf.forShards(site.urls(), site.dataset(), sharded.partitionsPerShard(), null);
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

  /**
   * The sharded datasets the catalog's servers declare: the union of each server's names (ignoring letter case, as
   * Spark does), sorted. A server that cannot be reached fails the listing naming it, as it fails a read.
   */
  static List<String> names(ReadConf catalog) {
    java.util.TreeMap<String, String> names = new java.util.TreeMap<>(String.CASE_INSENSITIVE_ORDER);
    for (int i = 0; i < catalog.urls().size(); i++) {
      try (io.thallus.ThallusClient client = Connector.connect(catalog, i)) {
        client.shardedDatasets().forEach(name -> names.putIfAbsent(name, name));
      } catch (ThallusException e) {
        throw ThallusException.of(e.code(), "cannot list the sharded datasets of server " + catalog.urls().get(i)
            + ": " + e.status().description(), e);
      }
    }
    return List.copyOf(names.values());
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
   * Where a shard is read: its holders that read it by the first holder's dataset path (a task that falls back to a
   * replica runs the same SQL, the same dataset path), the first holder first.
   */
  private static ShardedSource.Site site(ShardLayout.Shard shard) {
    String path = shard.holders().get(0).dataset();
    return new ShardedSource.Site(shard.holders().stream().filter(h -> h.dataset().equals(path))
        .map(h -> h.server().toString()).toList(), path);
  }
}
