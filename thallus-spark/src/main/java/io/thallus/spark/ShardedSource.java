package io.thallus.spark;

import java.io.Serializable;
import java.util.List;

/**
 * A read of a whole sharded dataset (option {@code sharded}, docs/sharding.md): its name, every server listed in
 * {@code url}, the partitions each shard is split into, and where each shard is read (empty until the table is
 * resolved, when the servers are asked once: {@link ShardedReads#resolve}).
 */
record ShardedSource(String name, List<String> servers, int partitionsPerShard, List<Site> sites)
    implements Serializable {
  /**
   * Where one shard is read: the servers holding it that read it by the same dataset path, its first holder first
   * (a task falls back to the next when one cannot be reached), and that path.
   */
  record Site(List<String> urls, String dataset) implements Serializable {
    Site {
      urls = List.copyOf(urls);
    }
  }

  ShardedSource {
    servers = List.copyOf(servers);
    sites = List.copyOf(sites);
  }

  static ShardedSource of(String name, List<String> servers, int partitionsPerShard) {
    if (!name.matches("[A-Za-z_][A-Za-z0-9_]{0,127}")) {
      throw new IllegalArgumentException("option 'sharded' must name a sharded dataset (a plain SQL identifier), got '"
          + name + "'");
    }
    return new ShardedSource(name, servers, partitionsPerShard, List.of());
  }

  /** The shards' count, 0 before the table is resolved. */
  int shards() {
    return sites.size();
  }

  ShardedSource withSites(List<Site> resolved) {
    return new ShardedSource(name, servers, partitionsPerShard, resolved);
  }
}
