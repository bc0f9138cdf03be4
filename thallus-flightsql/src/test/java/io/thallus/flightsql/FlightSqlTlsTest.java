package io.thallus.flightsql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.testing.TestCertificates;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.CallOption;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Both doors under TLS: Flight clients that trust the certificate get in; a client without TLS does not. */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class FlightSqlTlsTest {
  @TempDir
  Path temp;

  @Test
  void onlyTlsClientsThatTrustTheCertificateGetIn() throws Exception {
    TestCertificates certificates = TestCertificates.create(temp, "flight", "ip:127.0.0.1,dns:localhost");
    try (FlightSqlFixture fixture = new FlightSqlFixture(certificates);
         BufferAllocator memory = new RootAllocator()) {
      assertThat(fixture.flightSql.location()).startsWith("grpc+tls://");
      try (FlightClient tls = FlightClient.builder(memory, Location.forGrpcTls("127.0.0.1", fixture.flightSql.port()))
          .trustedCertificates(java.nio.file.Files.newInputStream(certificates.certificate())).build();
           FlightSqlClient sql = new FlightSqlClient(tls)) {
        CallOption auth = tls.authenticateBasicToken(FlightSqlFixture.USER, FlightSqlFixture.PASSWORD).orElseThrow();
        org.apache.arrow.flight.FlightInfo info = sql.execute("SELECT 6 * 7 AS answer", auth);
        // A TLS server refuses tcp and rdma (their bodies travel outside TLS): its FlightInfo announces no such lane,
        // and names no location a generic client would try.
        org.apache.arrow.flight.FlightEndpoint endpoint = info.getEndpoints().getFirst();
        assertThat(endpoint.getLocations()).isEmpty();
        FastLanes.Lane lane = FastLanes.of(endpoint).orElseThrow();
        assertThat(lane.locations()).extracting(l -> l.transport().orElseThrow()).isNotEmpty()
            .containsExactlyElementsOf(fixture.server.transports()).doesNotContain("tcp", "rdma");
        try (io.thallus.ThallusClient client = lane.connect(memory, io.thallus.ClientOptions.builder()
            .token(FlightSqlFixture.TOKEN).tls(io.thallus.Tls.client(certificates.certificate())
                .withoutHostnameVerification()).build());
             io.thallus.ThallusStream rows = client.query(lane.request())) {
          List<List<Object>> read = io.thallus.conformance.Collected.fromIterator(rows).rows();
          assertThat(read).hasSize(1);
          assertThat(read.getFirst().stream().map(String::valueOf).toList()).containsExactly("42");
        }
        try (FlightStream stream = sql.getStream(info.getEndpoints().getFirst().getTicket(), auth)) {
          assertThat(stream.next()).isTrue();
          assertThat(stream.getRoot().getVector(0).getObject(0)).isEqualTo(42);
        }
      }
      try (FlightClient plain = FlightClient.builder(memory, Location.forGrpcInsecure("127.0.0.1",
          fixture.flightSql.port())).build()) {
        assertThatThrownBy(() -> plain.authenticateBasicToken(FlightSqlFixture.USER, FlightSqlFixture.PASSWORD))
            .isInstanceOfSatisfying(FlightRuntimeException.class, e -> assertThat(e.status().code())
                .isEqualTo(org.apache.arrow.flight.FlightStatusCode.UNAVAILABLE));
      }
      String url = "jdbc:arrow-flight-sql://127.0.0.1:" + fixture.flightSql.port() + "/?user=" + FlightSqlFixture.USER
          + "&password=" + FlightSqlFixture.PASSWORD;
      try (Connection connection = DriverManager.getConnection(url + "&useEncryption=true&tlsRootCerts="
          + certificates.certificate()); Statement statement = connection.createStatement();
           ResultSet rows = statement.executeQuery("SELECT 'over tls' AS how")) {
        assertThat(rows.next()).isTrue();
        assertThat(rows.getString(1)).isEqualTo("over tls");
      }
      assertThatThrownBy(() -> DriverManager.getConnection(url + "&useEncryption=false").close())
          .isInstanceOf(SQLException.class);
    }
  }

  @Test
  void aTlsDoorRefusesToAnnounceALaneWhoseBodiesTravelOutsideTls() throws Exception {
    TestCertificates certificates = TestCertificates.create(temp, "lanes", "ip:127.0.0.1");
    try (BufferAllocator memory = new RootAllocator()) {
      io.thallus.Location tcp = io.thallus.Location.of("127.0.0.1", 47470, "tcp");
      assertThatThrownBy(() -> ThallusFlightSqlServer.builder(memory, io.thallus.Location.of("127.0.0.1", 47470))
          .tls(certificates.certificate(), certificates.privateKey()).lanes(List.of(tcp)).build().close())
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("thallus+tcp://127.0.0.1:47470")
          .hasMessageContaining("outside TLS");
    }
  }
}
