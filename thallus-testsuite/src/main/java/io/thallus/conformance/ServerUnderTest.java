package io.thallus.conformance;

import static io.thallus.testing.Memory.awaitZero;

import io.thallus.Location;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.apache.arrow.memory.BufferAllocator;

/**
 * The server a conformance test talks to: by default one the test starts in its own JVM; with
 * {@value #SERVER_PROPERTY} set, one already running on another host ({@code thallus serve ... --metrics-port}),
 * whose memory the suite reads from its Prometheus metrics at {@value #METRICS_PROPERTY}.
 */
sealed interface ServerUnderTest extends AutoCloseable {
  /** {@code HOST:PORT} of a running server to test instead of starting one, e.g. {@code 10.77.0.1:47470}. */
  String SERVER_PROPERTY = "thallus.conformance.server";
  /** That server's metrics, e.g. {@code http://10.77.0.1:9100/metrics}; required with {@value #SERVER_PROPERTY}. */
  String METRICS_PROPERTY = "thallus.conformance.metrics";

  /** A server started here with {@code allocator}, or the remote one the system properties name. */
  static ServerUnderTest start(BufferAllocator allocator) {
    String server = System.getProperty(SERVER_PROPERTY);
    if (server == null) {
      return new Local(ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create())
          .build().start());
    }
    return Remote.of(server, System.getProperty(METRICS_PROPERTY));
  }

  /** Where clients reach the server, no transport named. */
  Location location();

  /**
   * What the server holds for its client connections' streams: a local server's connection allocators; for a
   * remote one, the metrics' whole server allocator, which the connections' share cannot exceed.
   */
  long connectionBytes();

  /** Everything the server's allocator holds: connections, and batches its transports have placed for clients. */
  long serverBytes();

  /**
   * The test is over and its clients are closed: a local server closes, and fails if memory is still outstanding; a
   * remote one keeps running, and must come back to holding nothing and having no stream open, the same check seen
   * from outside.
   */
  @Override
  void close() throws InterruptedException;

  /** A server of this test's own, in this JVM. */
  record Local(ThallusServer server) implements ServerUnderTest {
    @Override
    public Location location() {
      return server.getLocation();
    }

    @Override
    public long connectionBytes() {
      return server.memoryUse().connectionBytes();
    }

    @Override
    public long serverBytes() {
      return server.memoryUse().allocatedBytes();
    }

    @Override
    public void close() {
      server.close();
    }
  }

  /**
   * A server on another host, shared by every test of a run (and by runs after it): what it holds is read from its
   * gauges {@code thallus_batch_memory_held_bytes} (the server's whole Arrow allocator) and
   * {@code thallus_streams_open}.
   */
  final class Remote implements ServerUnderTest {
    private static final Duration SCRAPE_TIMEOUT = Duration.ofSeconds(10);

    private final Location location;
    private final URI metrics;
    private final HttpClient http;

    private Remote(Location location, URI metrics) {
      this.location = location;
      this.metrics = metrics;
      this.http = HttpClient.newBuilder().connectTimeout(SCRAPE_TIMEOUT).build();
    }

    /** Refuses, naming the property and the form it takes, anything but {@code HOST:PORT} and an http(s) URL. */
    static Remote of(String server, String metrics) {
      URI address;
      try {
        address = new URI("thallus://" + server);
      } catch (URISyntaxException e) {
        throw malformed(SERVER_PROPERTY, server, "HOST:PORT, e.g. 10.77.0.1:47470");
      }
      if (address.getHost() == null || address.getPort() <= 0 || address.getRawUserInfo() != null
          || !address.getRawPath().isEmpty() || address.getRawQuery() != null || address.getRawFragment() != null) {
        throw malformed(SERVER_PROPERTY, server, "HOST:PORT, e.g. 10.77.0.1:47470");
      }
      if (metrics == null) {
        throw new IllegalArgumentException(SERVER_PROPERTY + " names a remote server, whose memory the suite reads "
            + "from its metrics: set " + METRICS_PROPERTY + " too, e.g. http://10.77.0.1:9100/metrics");
      }
      URI url;
      try {
        url = new URI(metrics);
      } catch (URISyntaxException e) {
        throw malformed(METRICS_PROPERTY, metrics, "an http URL, e.g. http://10.77.0.1:9100/metrics");
      }
      if (!("http".equals(url.getScheme()) || "https".equals(url.getScheme())) || url.getHost() == null) {
        throw malformed(METRICS_PROPERTY, metrics, "an http URL, e.g. http://10.77.0.1:9100/metrics");
      }
      String host = address.getHost();
      // URI keeps an IPv6 literal's brackets; Location adds its own.
      return new Remote(Location.of(host.startsWith("[") ? host.substring(1, host.length() - 1) : host,
          address.getPort()), url);
    }

    private static IllegalArgumentException malformed(String property, String value, String expected) {
      return new IllegalArgumentException(property + " must be " + expected + "; it is '" + value + "'");
    }

    @Override
    public Location location() {
      return location;
    }

    /** The server's whole allocator: the connections' share of it is not exported. */
    @Override
    public long connectionBytes() {
      return serverBytes();
    }

    @Override
    public long serverBytes() {
      return (long) gauge("thallus_batch_memory_held_bytes");
    }

    public long openStreams() {
      return (long) gauge("thallus_streams_open");
    }

    @Override
    public void close() throws InterruptedException {
      try (http) {
        awaitZero(this::openStreams, "streams open on " + location + " after the test's clients closed");
        awaitZero(this::serverBytes, "memory " + location + " holds after the test's clients closed");
      }
    }

    /** One gauge's value now: scraped, not cached, since the tests wait for these to change. */
    private double gauge(String name) {
      String text = scrape();
      for (String line : text.split("\n")) {
        if (line.startsWith(name + " ")) {
          return Double.parseDouble(line.substring(name.length() + 1).trim().split(" ")[0]);
        }
      }
      throw new AssertionError(metrics + " has no gauge " + name + "; is it a thallus server's metrics endpoint?");
    }

    private String scrape() {
      try {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(metrics).timeout(SCRAPE_TIMEOUT).build(),
            HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
          throw new AssertionError(metrics + " answered " + response.statusCode());
        }
        return response.body();
      } catch (IOException e) {
        throw new UncheckedIOException("cannot scrape " + metrics + ": " + e.getMessage(), e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted scraping " + metrics, e);
      }
    }
  }
}
