package io.thallus;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A read of a sharded dataset (docs/sharding.md): one stream per shard, all opened at once so every server works at
 * the same time, read one after another; together every row of the dataset that passes the {@link ShardedQuery},
 * in no particular order. Each shard is read from the first of its holders that can be reached; a server that is
 * down is skipped for a replica of the part, and a part with no reachable holder fails the read with UNAVAILABLE
 * naming its servers (never a partial result). A stream that fails once open fails the read.
 *
 * <pre>{@code
 * ShardLayout layout = ShardLayout.discover(allocator, servers, "lineitem", ClientOptions.defaults());
 * try (ShardedStream rows = ShardedStream.open(allocator, layout,
 *     ShardedQuery.all().columns(List.of("l_quantity")).filter("l_shipdate < DATE '1995-01-01'"),
 *     ClientOptions.defaults())) {
 *   while (rows.hasNext()) { VectorSchemaRoot batch = rows.next(); ... }
 * }
 * }</pre>
 */
public final class ShardedStream implements Iterator<VectorSchemaRoot>, AutoCloseable {
  private final Map<Location, ThallusClient> clients;
  private final List<ThallusStream> streams;
  private final Map<String, Location> servedBy;
  private int current;
  private boolean closed;

  private ShardedStream(Map<Location, ThallusClient> clients, List<ThallusStream> streams,
      Map<String, Location> servedBy) {
    this.clients = clients;
    this.streams = streams;
    this.servedBy = Collections.unmodifiableMap(servedBy);
  }

  /** Opens one stream per shard of {@code layout} running {@code query}; returns once every stream has its schema. */
  public static ShardedStream open(BufferAllocator allocator, ShardLayout layout, ShardedQuery query,
      ClientOptions options) {
    Objects.requireNonNull(query, "query");
    Map<Location, ThallusClient> clients = new LinkedHashMap<>();
    Map<Location, RuntimeException> down = new HashMap<>();
    List<ThallusStream> streams = new ArrayList<>();
    Map<String, Location> servedBy = new LinkedHashMap<>();
    try {
      for (ShardLayout.Shard shard : layout.shards()) {
        ThallusStream stream = null;
        for (ShardLayout.Holder holder : shard.holders()) {
          ThallusClient client = clientFor(allocator, holder.server(), options, clients, down);
          if (client != null) {
            stream = client.query(QueryRequest.builder(query.shardSql()).dataset(holder.dataset()).build());
            servedBy.put(shard.partId(), holder.server());
            break;
          }
        }
        if (stream == null) {
          StringBuilder why = new StringBuilder();
          for (ShardLayout.Holder holder : shard.holders()) {
            why.append(why.isEmpty() ? "" : "; ").append(holder.server()).append(": ")
                .append(down.get(holder.server()).getMessage());
          }
          throw ThallusException.of(StatusCode.UNAVAILABLE, "part " + shard.partId() + " of sharded dataset "
              + layout.name() + " cannot be read: no server holding it is up (" + why + ")");
        }
        streams.add(stream);
      }
    } catch (RuntimeException e) {
      streams.forEach(ThallusStream::close);
      clients.values().forEach(ThallusClient::close);
      throw e;
    }
    return new ShardedStream(clients, streams, servedBy);
  }

  /** The client of {@code server}, connected once per read; null when it cannot be reached (remembered why). */
  private static ThallusClient clientFor(BufferAllocator allocator, Location server, ClientOptions options,
      Map<Location, ThallusClient> clients, Map<Location, RuntimeException> down) {
    ThallusClient client = clients.get(server);
    if (client != null || down.containsKey(server)) {
      return client;
    }
    try {
      client = ThallusClient.connect(allocator, server, options);
      clients.put(server, client);
      return client;
    } catch (ThallusException e) {
      if (e.code() != StatusCode.UNAVAILABLE && e.code() != StatusCode.DEADLINE_EXCEEDED) {
        throw e;
      }
      down.put(server, e);
      return null;
    }
  }

  /** The schema every shard answers with. */
  public Schema schema() {
    return streams.isEmpty() ? new Schema(List.of()) : streams.get(0).getSchema();
  }

  /** Which server each part was read from, by part id. */
  public Map<String, Location> servedBy() {
    return servedBy;
  }

  @Override
  public boolean hasNext() {
    while (current < streams.size()) {
      if (streams.get(current).hasNext()) {
        return true;
      }
      current++;
    }
    return false;
  }

  /** The next batch, in a root the read owns: valid until the next call or {@link #close}. */
  @Override
  public VectorSchemaRoot next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    ThallusStream stream = streams.get(current);
    try {
      stream.loadNextBatch();
      return stream.getVectorSchemaRoot();
    } catch (java.io.IOException e) {
      throw ThallusException.of(StatusCode.INTERNAL, "reading a shard's batch: " + e.getMessage(), e);
    }
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    streams.forEach(ThallusStream::close);
    clients.values().forEach(ThallusClient::close);
  }
}
