package io.thallus.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.thallus.cli.ThallusCli;
import io.thallus.testing.ChildJvm;
import io.thallus.testing.TestCertificates;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fast lanes as generic Flight clients meet them ({@code flightsql/lanes_check.py}): ADBC's Flight SQL driver and
 * pyarrow.flight against {@code thallus serve --flight-sql-port} see an endpoint with no location, read it on the
 * connection they have, and find the lanes only in its app metadata, exactly the transports the native server
 * offers (under TLS: no tcp, no rdma). The venv is {@link FlightSqlAdbcTest}'s.
 */
@Timeout(value = 15, unit = TimeUnit.MINUTES)
class FlightSqlLanesTest {
  @TempDir
  Path temp;

  /** The transports in the server's "thallus serving ... over [shm, cma, tcp, ipc]" line. */
  private static List<String> transports(String serving) {
    String list = serving.substring(serving.lastIndexOf('[') + 1, serving.lastIndexOf(']'));
    return Arrays.stream(list.split(",")).map(String::strip).filter(s -> !s.isEmpty()).toList();
  }

  private List<String> check(String scheme, List<String> tls) throws Exception {
    Path python = FlightSqlAdbcTest.python();
    Path script = temp.resolve("lanes_check.py");
    if (!Files.exists(script)) {
      try (InputStream in = FlightSqlLanesTest.class.getResourceAsStream("/flightsql/lanes_check.py")) {
        Files.copy(in, script);
      }
    }
    Path token = Files.writeString(temp.resolve("token"), "lane-secret\n");
    Path data = Files.createDirectories(temp.resolve("data-" + scheme.replace('+', '-')));
    List<String> args = new ArrayList<>(List.of("serve", "--data-root", data.toString(), "--port", "0",
        "--flight-sql-port", "0", "--token-file", token.toString()));
    args.addAll(tls);
    try (ChildJvm serve = ChildJvm.start(ThallusCli.class, args.toArray(String[]::new))) {
      List<String> offered = transports(serve.awaitLine("thallus serving", 60));
      assertThat(offered).isNotEmpty();
      String flight = serve.awaitLine("flight sql at ", 30);
      String port = flight.substring(flight.lastIndexOf(':') + 1).strip();
      List<String> command = new ArrayList<>(List.of(python.toString(), script.toString(),
          scheme + "://127.0.0.1:" + port, "lane-secret", String.join(",", offered)));
      if (!tls.isEmpty()) {
        command.add(tls.get(1));
      }
      List<String> output = FlightSqlAdbcTest.run(command, 5);
      assertThat(output).contains("ok adbc: the endpoint names no location",
          "ok adbc: the app metadata announces the server's lanes", "ok adbc: the partition reads on this connection",
          "ok adbc: 50 queries", "ok adbc: the error is the server's, with no connection failure before it",
          "ok adbc: a statement in a transaction announces no lane", "ok pyarrow.flight: the endpoint names no location",
          "ok pyarrow.flight: the ticket reads on this connection",
          "ALL OK");
      return offered;
    }
  }

  @Test
  void genericClientsReadOnTheirConnectionAndSeeTheLanesOnlyInAppMetadata() throws Exception {
    List<String> offered = check("grpc", List.of());
    assertThat(offered).contains("tcp");
  }

  @Test
  void underTlsNoTcpOrRdmaLaneIsAnnounced() throws Exception {
    TestCertificates certificates = TestCertificates.create(temp, "lanes", "ip:127.0.0.1,dns:localhost");
    List<String> offered = check("grpc+tls", List.of("--tls-cert", certificates.certificate().toString(),
        "--tls-key", certificates.privateKey().toString()));
    assertThat(offered).doesNotContain("tcp", "rdma");
  }
}
