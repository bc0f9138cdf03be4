package io.thallus.testing;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.thallus.Location;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;
import org.apache.arrow.memory.BufferAllocator;

/**
 * A sharded dataset on three Thallus servers in this JVM (docs/sharding.md), as the sharded tests and the shard
 * benchmark set them up: server i listens on its own loopback address ({@link #HOSTS}), has its own data root
 * {@code work/node<i>} and DuckDB, a Micrometer registry of its own, and declares part {@code p<i>} of the dataset at
 * {@code <name>/part<i>}, whose files a {@link PartWriter} writes first. Closing stops the servers.
 */
public final class ShardedServers implements AutoCloseable {
  /** The servers' addresses: Linux routes all of 127.0.0.0/8 to the loopback device. */
  public static final List<String> HOSTS = List.of("127.0.0.1", "127.0.0.2", "127.0.0.3");

  /** Writes part {@code part}'s files into {@code dir} (made already, under the part's server's data root). */
  @FunctionalInterface
  public interface PartWriter {
    void write(int part, Path dir) throws Exception;
  }

  /** Server {@code part}: its address, data root, the part's folder, the server and its metrics. */
  public record Node(int part, String host, Path root, Path partDir, ThallusServer server,
      SimpleMeterRegistry meters) {}

  private final List<Node> nodes;

  private ShardedServers(List<Node> nodes) {
    this.nodes = List.copyOf(nodes);
  }

  /** Three servers, each holding its part of {@code name}. */
  public static ShardedServers start(BufferAllocator allocator, Path work, String name, PartWriter writer)
      throws Exception {
    return start(allocator, work, name, writer, (part, builder) -> {});
  }

  /** As {@link #start(BufferAllocator, Path, String, PartWriter)}, {@code more} adding to server i's settings. */
  public static ShardedServers start(BufferAllocator allocator, Path work, String name, PartWriter writer,
      BiConsumer<Integer, ThallusServer.Builder> more) throws Exception {
    List<Node> nodes = new ArrayList<>();
    try {
      for (int part = 0; part < HOSTS.size(); part++) {
        Path root = Files.createDirectories(work.resolve("node" + part));
        Path dir = Files.createDirectories(root.resolve(name + "/part" + part));
        writer.write(part, dir);
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        ThallusServer.Builder builder = ThallusServer.builder(allocator, Location.of(HOSTS.get(part), 0),
            DuckDBEngine.builder().filesUnder(root).build()).dataRoot(root).meterRegistry(meters)
            .shard(name, "p" + part, name + "/part" + part);
        more.accept(part, builder);
        nodes.add(new Node(part, HOSTS.get(part), root, dir, builder.build().start(), meters));
      }
    } catch (Exception | Error e) {
      nodes.forEach(node -> node.server().close());
      throw e;
    }
    return new ShardedServers(nodes);
  }

  /**
   * A writer of a lineitem-shaped part: {@code rowsPerPart} rows of TPC-H lineitem's Q1 and Q6 columns
   * (l_orderkey, l_returnflag, l_linestatus, l_quantity, l_extendedprice, l_discount, l_tax, l_shipdate), keys
   * {@code part * rowsPerPart} on, in {@code data.parquet} with row groups of 8,192 rows.
   */
  public static PartWriter lineitem(int rowsPerPart) {
    return (part, dir) -> {
      try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
           Statement statement = duckdb.createStatement()) {
        long from = (long) part * rowsPerPart;
        statement.execute("COPY (SELECT i AS l_orderkey, ['A','N','R'][1 + i % 3] AS l_returnflag, "
            + "['F','O'][1 + (i // 7) % 2] AS l_linestatus, (1 + i % 50)::DECIMAL(15,2) AS l_quantity, "
            + "((i % 9973) * 1.37)::DECIMAL(15,2) AS l_extendedprice, ((i % 11) / 100)::DECIMAL(15,2) AS l_discount, "
            + "((i % 9) / 100)::DECIMAL(15,2) AS l_tax, DATE '1992-01-01' + (i % 2500)::INTEGER AS l_shipdate "
            + "FROM range(" + from + ", " + (from + rowsPerPart) + ") t(i)) TO '" + dir.resolve("data.parquet")
            + "' (FORMAT parquet, ROW_GROUP_SIZE 8192)");
      }
    };
  }

  public List<Node> nodes() {
    return nodes;
  }

  /** Every server's location with its default transport, comma-separated: a read's {@code url}. */
  public String urls() {
    return String.join(",", nodes.stream().map(n -> n.server().getLocation().toString()).toList());
  }

  /** Every server's location with {@code transport}, comma-separated. */
  public String urls(String transport) {
    return String.join(",", nodes.stream().map(n -> n.server().getLocation().withTransport(transport).toString())
        .toList());
  }

  @Override
  public void close() {
    nodes.forEach(node -> node.server().close());
  }
}
