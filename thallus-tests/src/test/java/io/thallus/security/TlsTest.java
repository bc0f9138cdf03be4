package io.thallus.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.ClientOptions;
import io.thallus.Location;
import io.thallus.StatusCode;
import io.thallus.ThallusClient;
import io.thallus.ThallusException;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import io.thallus.ThallusStream;
import io.thallus.Tls;
import io.thallus.testing.Memory;
import io.thallus.testing.TestCertificates;
import java.nio.file.Path;
import java.util.List;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** TLS on the control connection: a real handshake with a generated certificate, verified by the client. */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class TlsTest {
  @TempDir
  static Path folder;

  private static TestCertificates serverCertificate;
  private static TestCertificates stranger;
  private static TestCertificates elsewhere;
  private static BufferAllocator allocator;
  private static ThallusServer server;

  @BeforeAll
  static void start() throws Exception {
    serverCertificate = TestCertificates.create(folder, "server", "ip:127.0.0.1,dns:localhost");
    stranger = TestCertificates.create(folder, "stranger", "ip:127.0.0.1");
    elsewhere = TestCertificates.create(folder, "elsewhere", "dns:example.com");
    allocator = new RootAllocator();
    server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create())
        .tls(Tls.server(serverCertificate.certificate(), serverCertificate.privateKey())).build().start();
  }

  @AfterAll
  static void stop() {
    try {
      server.close();
    } finally {
      allocator.close();
    }
  }

  private static ClientOptions trusting(Path certificate) {
    return ClientOptions.builder().tls(Tls.client(certificate)).connectTimeout(Duration.ofSeconds(10)).build();
  }

  private static long sum(ThallusClient client) {
    long sum = 0;
    try (ThallusStream stream = client.query("SELECT i FROM range(100000) t(i)")) {
      while (stream.hasNext()) {
        try (VectorSchemaRoot batch = stream.next()) {
          BigIntVector values = (BigIntVector) batch.getVector(0);
          for (int i = 0; i < batch.getRowCount(); i++) {
            sum += values.get(i);
          }
        }
      }
    }
    return sum;
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "ipc", "shm", "cma"})
  void aClientThatTrustsTheCertificateQueriesOverTls(String transport) {
    Location location = transport.isEmpty() ? server.getLocation() : server.getLocation().withTransport(transport);
    try (ThallusClient client = ThallusClient.connect(allocator, location,
        trusting(serverCertificate.certificate()))) {
      assertThat(client.transport()).isIn("ipc", "shm", "cma");
      assertThat(sum(client)).isEqualTo(99999L * 100000 / 2);
    }
  }

  @Test
  void transportsThatWouldCarryBodiesInTheClearAreRefused() {
    assertThatThrownBy(() -> ThallusClient.connect(allocator, server.getLocation().withTransport("tcp"),
        trusting(serverCertificate.certificate())).close())
        .isInstanceOfSatisfying(ThallusException.class,
            e -> assertThat(e.code()).isEqualTo(StatusCode.UNIMPLEMENTED))
        .hasMessageContaining("outside TLS");
  }

  @Test
  void anUntrustedCertificateOrAWrongHostIsRefusedByTheClient() {
    assertThatThrownBy(() -> ThallusClient.connect(allocator, server.getLocation(),
        trusting(stranger.certificate())).close())
        .isInstanceOf(ThallusException.class).hasMessageContaining("TLS with the server failed");
  }

  @Test
  void theHostNameIsCheckedUnlessTurnedOff() throws Exception {
    try (BufferAllocator memory = new RootAllocator();
         ThallusServer other = ThallusServer.builder(memory, Location.of("127.0.0.1", 0), DuckDBEngine.create())
             .tls(Tls.server(elsewhere.certificate(), elsewhere.privateKey())).build().start()) {
      assertThatThrownBy(() -> ThallusClient.connect(memory, other.getLocation(),
          trusting(elsewhere.certificate())).close())
          .isInstanceOf(ThallusException.class).hasMessageContaining("TLS with the server failed");
      ClientOptions lenient = ClientOptions.builder()
          .tls(Tls.client(elsewhere.certificate()).withoutHostnameVerification()).build();
      try (ThallusClient client = ThallusClient.connect(memory, other.getLocation(), lenient)) {
        assertThat(sum(client)).isEqualTo(99999L * 100000 / 2);
      }
    }
  }

  @Test
  void aPlainClientGetsAnErrorAndTheServerGoesOn() throws Exception {
    assertThatThrownBy(() -> ThallusClient.connect(allocator, server.getLocation(),
        ClientOptions.builder().connectTimeout(Duration.ofSeconds(5)).build()).close())
        .isInstanceOf(ThallusException.class);
    try (ThallusClient client = ThallusClient.connect(allocator, server.getLocation(),
        trusting(serverCertificate.certificate()))) {
      assertThat(sum(client)).isEqualTo(99999L * 100000 / 2);
    }
    Memory.awaitZero(() -> server.memoryUse().allocatedBytes(), "server memory");
  }

  @Test
  void theJdbcDriverSpeaksTls() throws Exception {
    String url = "jdbc:thallus://127.0.0.1:" + server.getLocation().port() + "?tls=true&tlsTrust="
        + serverCertificate.certificate();
    try (java.sql.Connection connection = java.sql.DriverManager.getConnection(url);
         java.sql.Statement statement = connection.createStatement();
         java.sql.ResultSet result = statement.executeQuery("SELECT sum(i) FROM range(1000) t(i)")) {
      assertThat(result.next()).isTrue();
      assertThat(result.getLong(1)).isEqualTo(999L * 1000 / 2);
    }
    assertThatThrownBy(() -> java.sql.DriverManager.getConnection(url.replace("?tls=true&", "?tls=maybe&")))
        .isInstanceOf(java.sql.SQLException.class).hasMessageContaining("tls must be true or false");
  }

  @Test
  void sparkReadsOverTlsAndRefusesAServerItDoesNotTrust() throws Exception {
    SparkSession spark = SparkSession.builder().master("local[2]").appName("thallus-tls-test")
        .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1").getOrCreate();
    try {
      String url = "thallus://127.0.0.1:" + server.getLocation().port();
      List<Row> rows = spark.read().format("thallus").option("url", url).option("tls", "true")
          .option("tlsTrust", serverCertificate.certificate().toString()).option("partitions", "2")
          .option("query", "SELECT i, i * 3 AS j FROM range(5000) t(i)").load().collectAsList();
      assertThat(rows).hasSize(5000);
      boolean[] seen = new boolean[5000];
      for (Row row : rows) {
        int i = (int) row.getLong(0);
        assertThat(row.getLong(1)).as("row %d", i).isEqualTo(3L * i);
        seen[i] = true;
      }
      for (int i = 0; i < seen.length; i++) {
        assertThat(seen[i]).as("row %d", i).isTrue();
      }
      // The JDK's trust store does not know the self-signed certificate: the read fails and says why.
      assertThatThrownBy(() -> spark.read().format("thallus").option("url", url).option("tls", "true")
          .option("query", "SELECT 1").load().collectAsList())
          .hasStackTraceContaining("TLS with the server failed");
      assertThatThrownBy(() -> spark.read().format("thallus").option("url", url)
          .option("tlsTrust", serverCertificate.certificate().toString()).option("query", "SELECT 1").load())
          .hasStackTraceContaining("option 'tlsTrust' needs option 'tls'");
    } finally {
      spark.stop();
    }
    Memory.awaitZero(() -> server.memoryUse().allocatedBytes(), "server memory");
  }

  @Test
  void missingFilesAreNamed() {
    assertThatThrownBy(() -> Tls.server(folder.resolve("nope.pem"), serverCertificate.privateKey()))
        .isInstanceOf(ThallusException.class).hasMessageContaining("nope.pem");
  }
}
