package io.thallus;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Where the parts of a sharded dataset live, as the servers themselves say (docs/sharding.md): each server is asked
 * to describe the dataset's name ({@link ThallusClient#describe(String)}, answered with
 * {@link DatasetDescription.Kind#SHARD}) and the answers are joined by part id. Servers answering the same id with
 * the same checksum hold replicas of that part; the same id with different checksums, or different schemas, is an
 * error naming both servers. Every server must answer: one that cannot be reached might hold a part no other does,
 * so learning the layout fails naming it rather than reading part of the data. A server that answers that it
 * declares no part of the name (NOT_FOUND) holds none (servers of one cluster may hold different datasets); no
 * server declaring any part is NOT_FOUND.
 */
public record ShardLayout(String name, Schema schema, List<Shard> shards) {
  /** One part of the dataset and the servers that hold it, in the order the servers were listed. */
  public record Shard(String partId, String checksum, long bytes, long rows, List<Holder> holders) {
    public Shard {
      holders = List.copyOf(holders);
      if (holders.isEmpty()) {
        throw new IllegalArgumentException("part " + partId + " has no server");
      }
    }
  }

  /** A server holding a part, and the dataset path (under its data root) a query reads the part by there. */
  public record Holder(Location server, String dataset) {
    public Holder {
      Objects.requireNonNull(server, "server");
      Objects.requireNonNull(dataset, "dataset");
    }
  }

  public ShardLayout {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(schema, "schema");
    shards = List.copyOf(shards);
  }

  /** Rows of all parts together (each part counted once, however many replicas it has). */
  public long rows() {
    return shards.stream().mapToLong(Shard::rows).sum();
  }

  /** Asks each of {@code servers} which parts of sharded dataset {@code name} it holds; see the class comment. */
  public static ShardLayout discover(BufferAllocator allocator, List<Location> servers, String name,
      ClientOptions options) {
    Objects.requireNonNull(name, "name");
    if (servers.isEmpty()) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "a sharded read needs at least one server");
    }
    Map<String, PartSeen> parts = new LinkedHashMap<>();
    Schema schema = null;
    Location schemaServer = null;
    for (Location server : servers) {
      DatasetDescription description = describeOn(allocator, server, name, options);
      if (description == null) {
        continue; // it declares no part of the name
      }
      if (schema == null) {
        schema = description.schema();
        schemaServer = server;
      } else if (!schema.equals(description.schema())) {
        throw ThallusException.of(StatusCode.FAILED_PRECONDITION, "servers " + schemaServer + " and " + server
            + " give sharded dataset " + name + " different schemas: " + schema + " and " + description.schema());
      }
      for (DatasetDescription.Part part : description.parts()) {
        DatasetDescription.ShardPart shard = (DatasetDescription.ShardPart) part;
        PartSeen seen = parts.get(shard.id());
        if (seen == null) {
          parts.put(shard.id(), new PartSeen(shard, server));
        } else if (!seen.first.checksum().equals(shard.checksum())) {
          throw ThallusException.of(StatusCode.FAILED_PRECONDITION, "part " + shard.id() + " of sharded dataset "
              + name + " differs between servers " + seen.firstServer + " (checksum " + seen.first.checksum()
              + ") and " + server + " (checksum " + shard.checksum() + "): the same part id must hold the same data");
        } else {
          seen.holders.add(new Holder(server, shard.dataset()));
        }
      }
    }
    if (schema == null) {
      throw ThallusException.of(StatusCode.NOT_FOUND, "no server of " + servers + " declares a part of sharded "
          + "dataset " + name);
    }
    List<Shard> shards = new ArrayList<>();
    for (PartSeen seen : parts.values()) {
      shards.add(new Shard(seen.first.id(), seen.first.checksum(), seen.first.bytes(), seen.first.rows(),
          seen.holders));
    }
    return new ShardLayout(name, schema, shards);
  }

  private static final class PartSeen {
    final DatasetDescription.ShardPart first;
    final Location firstServer;
    final List<Holder> holders = new ArrayList<>();

    PartSeen(DatasetDescription.ShardPart first, Location server) {
      this.first = first;
      this.firstServer = server;
      holders.add(new Holder(server, first.dataset()));
    }
  }

  /** What {@code server} holds of {@code name}; null when it says it has no such name. */
  private static DatasetDescription describeOn(BufferAllocator allocator, Location server, String name,
      ClientOptions options) {
    DatasetDescription description;
    try (ThallusClient client = ThallusClient.connect(allocator, server, options)) {
      description = client.describe(name);
    } catch (ThallusException e) {
      if (e.code() == StatusCode.NOT_FOUND) {
        return null;
      }
      throw ThallusException.of(e.code(), "cannot learn which parts of sharded dataset " + name + " server " + server
          + " holds: " + e.status().description(), e);
    }
    if (description.kind() != DatasetDescription.Kind.SHARD) {
      throw ThallusException.of(StatusCode.FAILED_PRECONDITION, "server " + server + " declares no sharded dataset "
          + name + " (it has a " + description.kind() + " of that name)");
    }
    return description;
  }
}
