package io.thallus.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The metrics endpoint under strangers: half-sent requests and silent sockets neither block it nor stay. */
@Timeout(60)
class MetricsEndpointTest {
  /** A request line and a header, without the blank line that ends the request: the server waits for more. */
  private static final byte[] HALF_A_REQUEST = "GET /health HTTP/1.1\r\nHost: localhost\r\n"
      .getBytes(StandardCharsets.US_ASCII);

  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final List<Socket> strangers = new ArrayList<>();

  @AfterEach
  void closeStrangers() throws IOException {
    for (Socket stranger : strangers) {
      stranger.close();
    }
  }

  @Test
  void healthAndMetricsAnswerBesideHalfSentRequestsAndTheHoldersAreClosedAtTheDeadline() throws Exception {
    Duration deadline = Duration.ofMillis(1500);
    registry.counter("thallus_probe_total").increment();
    try (MetricsEndpoint endpoint = MetricsEndpoint.start("127.0.0.1", 0, registry, () -> true,
        new MetricsEndpoint.Settings(deadline, 8))) {
      HttpClient http = HttpClient.newHttpClient();
      // The client's first request loads its classes, which on a loaded machine may take longer than the deadline.
      assertThat(get(http, endpoint, "/health", Duration.ofSeconds(10)).statusCode()).isEqualTo(200);
      List<Long> connectedAt = new ArrayList<>();
      for (int i = 0; i < 6; i++) {
        // Taken before the connect, so before the server's accept starts the stranger's deadline.
        connectedAt.add(System.nanoTime());
        Socket stranger = connect(endpoint);
        if (i % 2 == 0) {
          stranger.getOutputStream().write(HALF_A_REQUEST);
          stranger.getOutputStream().flush();
        }
      }

      HttpResponse<String> health = get(http, endpoint, "/health", deadline);
      assertThat(health.statusCode()).isEqualTo(200);
      assertThat(health.body()).isEqualTo("accepting queries\n");
      HttpResponse<String> metrics = get(http, endpoint, "/metrics", deadline);
      assertThat(metrics.statusCode()).isEqualTo(200);
      assertThat(metrics.body()).contains("thallus_probe_total 1.0");

      // Every stranger, half a request sent or nothing, is closed once its deadline has passed and not before.
      for (int i = 0; i < strangers.size(); i++) {
        assertThat(awaitClosed(strangers.get(i), Duration.ofSeconds(20))).as("stranger %d", i).isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - connectedAt.get(i))).isGreaterThanOrEqualTo(deadline);
      }
    }
  }

  @Test
  void oneConnectionOverTheCapClosesTheOldestSilentOneNeverAHalfSentRequestWhileSilentOnesRemain() throws Exception {
    // A deadline far away: every close seen here is the cap's.
    try (MetricsEndpoint endpoint = MetricsEndpoint.start("127.0.0.1", 0, registry, () -> true,
        new MetricsEndpoint.Settings(Duration.ofSeconds(60), 8))) {
      List<Socket> silent = new ArrayList<>();
      for (int i = 0; i < 24; i++) {
        silent.add(connect(endpoint));
      }
      List<Socket> holders = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        Socket holder = connect(endpoint);
        holder.getOutputStream().write(HALF_A_REQUEST);
        holder.getOutputStream().flush();
        holders.add(holder);
      }

      // A connection counts from its first byte or after a second of silence: the holders at once, the silent ones a
      // second after they came, in order. 28 counted against a cap of 8: each of the 20 past it closed the oldest
      // silent socket, whatever the order in which the holders' bytes and the silent ones' seconds came.
      for (int i = 0; i < 20; i++) {
        assertThat(awaitClosed(silent.get(i), Duration.ofSeconds(20))).as("silent socket %d", i).isTrue();
      }
      // A request that comes whole is counted too: /health, the ninth, closes the oldest silent socket left and is
      // answered; /metrics comes after /health was answered and closed, within the cap, and closes nothing.
      HttpClient http = HttpClient.newHttpClient();
      assertThat(get(http, endpoint, "/health", Duration.ofSeconds(10)).statusCode()).isEqualTo(200);
      HttpResponse<String> metrics = get(http, endpoint, "/metrics", Duration.ofSeconds(10));
      assertThat(metrics.statusCode()).isEqualTo(200);
      assertThat(awaitClosed(silent.get(20), Duration.ofSeconds(10))).as("silent socket 20").isTrue();
      for (Socket open : List.of(silent.get(21), silent.get(22), silent.get(23), holders.get(0), holders.get(1),
          holders.get(2), holders.get(3))) {
        assertThat(isOpen(open)).isTrue();
      }
    }
  }

  @Test
  void anUnknownPathIsNotFoundAndAMalformedRequestIsBad() throws Exception {
    try (MetricsEndpoint endpoint = MetricsEndpoint.start("127.0.0.1", 0, registry, () -> false,
        MetricsEndpoint.Settings.DEFAULTS)) {
      HttpClient http = HttpClient.newHttpClient();
      HttpResponse<String> health = get(http, endpoint, "/health", Duration.ofSeconds(10));
      assertThat(health.statusCode()).isEqualTo(503);
      assertThat(health.body()).isEqualTo("shutting down\n");
      assertThat(get(http, endpoint, "/secrets", Duration.ofSeconds(10)).statusCode()).isEqualTo(404);
      try (Socket raw = connect(endpoint)) {
        raw.getOutputStream().write("NOT HTTP AT ALL\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        raw.setSoTimeout(10_000);
        String answer = new String(raw.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
        assertThat(answer).startsWith("HTTP/1.1 400 Bad Request");
      }
    }
    assertThatThrownBy(() -> new MetricsEndpoint.Settings(Duration.ZERO, 8))
        .isInstanceOf(IllegalArgumentException.class);
  }

  private Socket connect(MetricsEndpoint endpoint) throws IOException {
    Socket socket = new Socket("127.0.0.1", endpoint.port());
    strangers.add(socket);
    return socket;
  }

  private static HttpResponse<String> get(HttpClient http, MetricsEndpoint endpoint, String path, Duration timeout)
      throws IOException, InterruptedException {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + endpoint.port() + path))
        .timeout(timeout).build(), HttpResponse.BodyHandlers.ofString());
  }

  /** Whether the server closed {@code socket} (sending nothing) within {@code within}. */
  private static boolean awaitClosed(Socket socket, Duration within) throws IOException {
    socket.setSoTimeout((int) within.toMillis());
    try {
      return socket.getInputStream().read() == -1;
    } catch (SocketTimeoutException stillOpen) {
      return false;
    } catch (IOException reset) {
      return true;
    }
  }

  /** Whether {@code socket} is still open: nothing to read, not even its end, right now. */
  private static boolean isOpen(Socket socket) throws IOException {
    socket.setSoTimeout(50);
    try {
      socket.getInputStream().read();
      return false;
    } catch (SocketTimeoutException open) {
      return true;
    }
  }
}
