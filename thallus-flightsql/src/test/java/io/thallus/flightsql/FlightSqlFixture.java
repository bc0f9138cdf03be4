package io.thallus.flightsql;

import io.thallus.server.Authentication;
import io.thallus.ClientOptions;
import io.thallus.Location;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import io.thallus.Tls;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.function.UnaryOperator;
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
    this(null);
  }

  /** With {@code certificates}, both doors serve TLS with them, and the sessions trust them. */
  FlightSqlFixture(io.thallus.testing.TestCertificates certificates) throws java.io.IOException {
    this(certificates, UnaryOperator.identity(), UnaryOperator.identity());
  }

  /** Both doors admit by {@code admission}; the Flight SQL door holds at most {@code maxSessions}. */
  FlightSqlFixture(io.thallus.server.Admission admission, int maxSessions) throws java.io.IOException {
    this(null, door -> door.admission(admission), door -> door.admission(admission).maxSessions(maxSessions));
  }

  /** With settings of either door changed from the defaults (small limits for a test). */
  FlightSqlFixture(UnaryOperator<ThallusServer.Builder> nativeSettings,
      UnaryOperator<ThallusFlightSqlServer.Builder> flightSettings) throws java.io.IOException {
    this(null, nativeSettings, flightSettings);
  }

  private FlightSqlFixture(io.thallus.testing.TestCertificates certificates,
      UnaryOperator<ThallusServer.Builder> nativeSettings,
      UnaryOperator<ThallusFlightSqlServer.Builder> flightSettings) throws java.io.IOException {
    dataRoot = Files.createTempDirectory("thallus-flightsql-test");
    ThallusServer.Builder nativeDoor = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0),
            DuckDBEngine.builder().filesUnder(dataRoot).build()).dataRoot(dataRoot)
        .authentication(Authentication.users(Map.of(USER, PASSWORD)).or(Authentication.token(TOKEN)));
    if (certificates != null) {
      nativeDoor.tls(Tls.server(certificates.certificate(), certificates.privateKey()));
    }
    server = nativeSettings.apply(nativeDoor).build().start();
    ThallusFlightSqlServer.Builder door = ThallusFlightSqlServer.builder(allocator, server.getLocation()).lanes(server);
    if (certificates != null) {
      door.tls(certificates.certificate(), certificates.privateKey()).clientOptions(ClientOptions.builder()
          .tls(Tls.client(certificates.certificate()).withoutHostnameVerification()).build());
    }
    flightSql = flightSettings.apply(door).build().start();
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
