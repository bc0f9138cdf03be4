package io.thallus.spark;

import java.io.Serializable;
import java.util.List;

/**
 * A read of a whole sharded dataset (option {@code sharded}, docs/sharding.md): its name, every server listed in
 * {@code url} (each is asked which parts it holds when the scan is planned), the partitions each shard is split
 * into, and how many shards the servers declared when the table was resolved (0 before).
 */
record ShardedSource(String name, List<String> servers, int partitionsPerShard, int shards) implements Serializable {
  static ShardedSource of(String name, List<String> servers, int partitionsPerShard) {
    if (!name.matches("[A-Za-z_][A-Za-z0-9_]{0,127}")) {
      throw new IllegalArgumentException("option 'sharded' must name a sharded dataset (a plain SQL identifier), got '"
          + name + "'");
    }
    return new ShardedSource(name, List.copyOf(servers), partitionsPerShard, 0);
  }

  ShardedSource withShards(int count) {
    return new ShardedSource(name, servers, partitionsPerShard, count);
  }
}
