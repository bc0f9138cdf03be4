package io.thallus.spark;

import io.thallus.Location;
import io.thallus.ThallusClient;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import io.thallus.ThallusStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/** A real Thallus server in this JVM on 127.0.0.1, port 0, with a data root of its own; closing checks for leaks. */
final class TestServer implements AutoCloseable {
  private final BufferAllocator allocator = new RootAllocator();
  private final Path dataRoot;
  private final ThallusServer server;

  TestServer() {
    this(builder -> builder);
  }

  /** A server with settings of its own ({@code settings} adds them to the builder: limits, say). */
  TestServer(java.util.function.UnaryOperator<ThallusServer.Builder> settings) {
    try {
      dataRoot = Files.createTempDirectory("thallus-spark-test");
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    server = settings.apply(ThallusServer.builder(allocator, Location.of("127.0.0.1", 0),
            DuckDBEngine.builder().filesUnder(dataRoot).build()).dataRoot(dataRoot)).build().start();
  }

  Path dataRoot() {
    return dataRoot;
  }

  /** {@code thallus+tcp://127.0.0.1:port}, or another transport by name ("" for the server's choice). */
  String url(String transport) {
    Location location = server.getLocation();
    return transport.isEmpty() ? location.toString() : location.withTransport(transport).toString();
  }

  String url() {
    return url("tcp");
  }

  /** Runs a statement (CREATE TABLE ...) on the server's own DuckDB. */
  void execute(String sql) {
    try (BufferAllocator local = allocator.newChildAllocator("setup", 0, Long.MAX_VALUE);
         ThallusClient client = ThallusClient.connect(local, server.getLocation().withTransport("tcp"));
         ThallusStream stream = client.query(sql)) {
      while (stream.hasNext()) {
        stream.next().close();
      }
    }
  }

  @Override
  public void close() throws IOException {
    try {
      server.close();
      allocator.close();
    } finally {
      try (Stream<Path> files = Files.walk(dataRoot)) {
        files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }
}
