package io.thallus.cli;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;

/**
 * The server's metrics in Prometheus' text format at {@code /metrics}, and {@code /health} (200 while the server
 * accepts queries, 503 once it is shutting down), on the JDK's own HTTP server with one thread: scrapes are rare
 * and cheap, and a slow scraper must not take threads from the server.
 */
final class MetricsEndpoint implements AutoCloseable {
  private final HttpServer http;
  private final ExecutorService thread;

  private MetricsEndpoint(HttpServer http, ExecutorService thread) {
    this.http = http;
    this.thread = thread;
  }

  static MetricsEndpoint start(String host, int port, PrometheusMeterRegistry registry, BooleanSupplier accepting)
      throws IOException {
    HttpServer http = HttpServer.create(new InetSocketAddress(host, port), 16);
    http.createContext("/metrics", exchange -> answer(exchange, 200, registry.scrape(),
        "text/plain; version=0.0.4; charset=utf-8"));
    http.createContext("/health", exchange -> {
      boolean up = accepting.getAsBoolean();
      answer(exchange, up ? 200 : 503, up ? "accepting queries\n" : "shutting down\n", "text/plain; charset=utf-8");
    });
    ExecutorService thread = Executors.newSingleThreadExecutor(
        Thread.ofPlatform().name("thallus-metrics").daemon().factory());
    http.setExecutor(thread);
    http.start();
    return new MetricsEndpoint(http, thread);
  }

  private static void answer(HttpExchange exchange, int status, String body, String type) throws IOException {
    try (exchange) {
      byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", type);
      if ("HEAD".equals(exchange.getRequestMethod())) {
        exchange.sendResponseHeaders(status, -1);
        return;
      }
      exchange.sendResponseHeaders(status, bytes.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(bytes);
      }
    }
  }

  int port() {
    return http.getAddress().getPort();
  }

  @Override
  public void close() {
    http.stop(0);
    thread.shutdownNow();
  }
}
