package io.thallus;

import io.thallus.internal.client.ShardLayout;
import io.thallus.internal.client.ShardQueryShape;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A dataset of files spread over several servers, each serving its own share under the same dataset path below its
 * data root (see docs/sharding.md). Opening it asks every server what it holds ({@link ThallusClient#describe}):
 * files of the same id (path under the data root) and checksum on several servers are replicas of one file, read
 * once; the same id with different checksums fails here (FAILED_PRECONDITION naming both servers and the file).
 * Every server must answer: one that cannot be reached fails the open (UNAVAILABLE naming it), as what it holds is
 * not known.
 *
 * <p>{@link #query} then runs one SELECT of row-wise expressions over the view {@code dataset} (a filter and a
 * projection; anything that needs merging is refused, see {@link #query}) on each server over only the files it is
 * chosen to read, and hands back all rows as one stream. A server that goes down after the open is skipped where
 * every file it was to read has a replica on a live server; otherwise the read fails UNAVAILABLE naming it.
 *
 * <p>Holds one {@link ThallusClient} per server until closed. Not thread-safe: one thread reads at a time.
 */
public final class ShardedDataset implements AutoCloseable {
  /** The most servers one sharded dataset spans. */
  public static final int MAX_SERVERS = 256;

  private final List<Location> servers;
  private final List<ThallusClient> clients;
  private final String dataset;
  private final Schema schema;
  private final ShardLayout layout;
  /** Servers found down since the open (indexes into {@link #servers}). */
  private final Set<Integer> down = new HashSet<>();

  private ShardedDataset(List<Location> servers, List<ThallusClient> clients, String dataset, Schema schema,
      ShardLayout layout) {
    this.servers = servers;
    this.clients = clients;
    this.dataset = dataset;
    this.schema = schema;
    this.layout = layout;
  }

  public static ShardedDataset open(BufferAllocator allocator, List<Location> servers, String dataset) {
    return open(allocator, servers, dataset, ClientOptions.defaults());
  }

  /**
   * Connects to every server of {@code servers} (1 to {@link #MAX_SERVERS}, none twice) and learns which files of
   * {@code dataset} (a path relative to each server's data root, the same on all) each holds.
   */
  public static ShardedDataset open(BufferAllocator allocator, List<Location> servers, String dataset,
      ClientOptions options) {
    Objects.requireNonNull(allocator, "allocator");
    Objects.requireNonNull(options, "options");
    List<Location> locations = List.copyOf(servers);
    if (locations.isEmpty() || locations.size() > MAX_SERVERS) {
      throw new IllegalArgumentException("a sharded dataset spans 1 to " + MAX_SERVERS + " servers, got "
          + locations.size());
    }
    if (new HashSet<>(locations).size() != locations.size()) {
      throw new IllegalArgumentException("a server is named twice in " + locations);
    }
    if (Objects.requireNonNull(dataset, "dataset").isBlank()) {
      throw new IllegalArgumentException("empty dataset path");
    }
    List<ThallusClient> clients = new ArrayList<>();
    try {
      List<DatasetDescription> descriptions = new ArrayList<>();
      List<String> names = locations.stream().map(Location::toString).toList();
      Schema schema = null;
      for (int i = 0; i < locations.size(); i++) {
        try {
          clients.add(ThallusClient.connect(allocator, locations.get(i), options));
          descriptions.add(clients.get(i).describe("dataset", dataset));
        } catch (ThallusException e) {
          throw ThallusException.of(e.code(), "server " + names.get(i) + ": " + e.getMessage(), e);
        }
        Schema each = descriptions.get(i).schema();
        if (schema == null) {
          schema = each;
        } else if (!schema.equals(each)) {
          throw ThallusException.of(StatusCode.FAILED_PRECONDITION, "dataset " + dataset + " has schema " + schema
              + " on server " + names.get(0) + " but " + each + " on server " + names.get(i));
        }
      }
      ShardLayout layout = ShardLayout.of(names, descriptions);
      if (layout.ids().isEmpty()) {
        throw ThallusException.of(StatusCode.NOT_FOUND, "no server of " + names + " holds a file of dataset "
            + dataset);
      }
      return new ShardedDataset(locations, List.copyOf(clients), dataset, schema, layout);
    } catch (RuntimeException e) {
      clients.forEach(ThallusClient::close);
      throw e;
    }
  }

  /** The dataset path this reads on every server. */
  public String dataset() {
    return dataset;
  }

  /** The schema of {@code SELECT *} over the dataset, the same on every server. */
  public Schema schema() {
    return schema;
  }

  /** Every file's id (its path under the data root), each with the servers holding it, in the servers' order. */
  public Map<String, List<Location>> parts() {
    Map<String, List<Location>> parts = new LinkedHashMap<>();
    for (String id : layout.ids()) {
      parts.put(id, layout.holders(id).stream().map(servers::get).toList());
    }
    return parts;
  }

  /**
   * Which server a read now would read each file from: the first server holding it that is not known to be down.
   * UNAVAILABLE where a file has no live holder.
   */
  public Map<Location, List<String>> placement() {
    Map<Location, List<String>> placement = new LinkedHashMap<>();
    layout.assign(down).forEach((server, ids) -> placement.put(servers.get(server), ids));
    return placement;
  }

  /**
   * Runs {@code sql} over the files, each read once, and returns all rows in no particular order. {@code sql} is
   * one {@code SELECT ... FROM dataset [WHERE ...]} of row-wise expressions, optionally with {@code ?}
   * placeholders for {@code parameters}; an aggregate, DISTINCT, GROUP BY, ORDER BY, LIMIT, window, join, set
   * operation or subquery is refused with INVALID_ARGUMENT (their answers over all files are not the union of
   * their answers over each; see docs/sharding.md for how the check is made).
   */
  public ShardedStream query(String sql, List<?> parameters) {
    Objects.requireNonNull(sql, "sql");
    ShardQueryShape.check(sql);
    return new ShardedStream(this, sql, List.copyOf(parameters));
  }

  public ShardedStream query(String sql) {
    return query(sql, List.of());
  }

  /** The server to read {@code id} from now, or UNAVAILABLE naming the down servers that hold it. */
  int readerOf(String id) {
    for (int server : layout.holders(id)) {
      if (!down.contains(server)) {
        return server;
      }
    }
    throw ThallusException.of(StatusCode.UNAVAILABLE, "server " + String.join(" and ", layout.holders(id).stream()
        .map(server -> servers.get(server).toString()).toList()) + " is down and no live server holds a replica of "
        + "its file " + id);
  }

  Location location(int server) {
    return servers.get(server);
  }

  ThallusClient client(int server) {
    return clients.get(server);
  }

  void markDown(int server) {
    down.add(server);
  }

  /** Every file id, in the order a read takes them. */
  List<String> ids() {
    return List.copyOf(layout.ids());
  }

  @Override
  public void close() {
    RuntimeException first = null;
    for (ThallusClient client : clients) {
      try {
        client.close();
      } catch (RuntimeException e) {
        first = first == null ? e : first;
      }
    }
    if (first != null) {
      throw first;
    }
  }
}
