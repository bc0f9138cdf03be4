package io.thallus.flightsql;

import io.thallus.Authentication;
import io.thallus.Location;
import io.thallus.ThallusServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * A real Thallus server (users alice/wonderland and a token) on 127.0.0.1 with a data root of its own, and a Flight
 * SQL front door for it listing every transport the server has as a lane. Closing checks that all memory returned.
 */
final class FlightSqlFixture implements AutoCloseable {
  static final String USER = "alice";
  static final String PASSWORD = "wonderland";
  static final String TOKEN = "s3cret-token";

  final BufferAllocator allocator = new RootAllocator();
  final Path dataRoot;
  final ThallusServer server;
  final ThallusFlightSqlServer flightSql;

  FlightSqlFixture() throws java.io.IOException {
    this(ThallusFlightSqlServer.Builder::build);
  }

  FlightSqlFixture(java.util.function.Function<ThallusFlightSqlServer.Builder, ThallusFlightSqlServer> finish)
      throws java.io.IOException {
    dataRoot = Files.createTempDirectory("thallus-flightsql-test");
    server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0)).dataRoot(dataRoot)
        .authentication(Authentication.users(Map.of(USER, PASSWORD)).or(Authentication.token(TOKEN)))
        .build().start();
    List<Location> lanes = new ArrayList<>();
    for (String transport : server.transports()) {
      lanes.add(server.getLocation().withTransport(transport));
    }
    flightSql = finish.apply(ThallusFlightSqlServer.builder(allocator, server.getLocation()).lanes(lanes)).start();
  }

  @Override
  public void close() throws Exception {
    try {
      flightSql.close();
      server.close();
      allocator.close();
    } finally {
      try (var files = Files.walk(dataRoot)) {
        files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }
}
