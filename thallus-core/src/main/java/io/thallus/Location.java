package io.thallus;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Objects;
import java.util.Optional;

/**
 * Where a Thallus server listens, and which transport the client asks for.
 *
 * <p>{@code thallus://host:port} lets client and server pick the best transport both have;
 * {@code thallus+tcp://host:port} (or {@code +ipc}, {@code +shm}, {@code +rdma}) asks for one by name.
 */
public final class Location {
  public static final String SCHEME = "thallus";
  /** The port {@code thallus serve} listens on unless told otherwise. */
  public static final int DEFAULT_PORT = 47470;

  private final String host;
  private final int port;
  private final String transport;

  private Location(String host, int port, String transport) {
    if (host == null || host.isBlank()) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "a location needs a host");
    }
    if (port < 0 || port > 65535) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "port " + port + " is outside 0..65535");
    }
    this.host = host;
    this.port = port;
    this.transport = transport;
  }

  /** A location that lets client and server choose the best transport they share. */
  public static Location of(String host, int port) {
    return new Location(host, port, null);
  }

  /** A location that asks for one transport by name ({@code "tcp"}, {@code "ipc"}, ...). */
  public static Location of(String host, int port, String transport) {
    return new Location(host, port, Objects.requireNonNull(transport, "transport"));
  }

  /** Parses {@code thallus://host:port} or {@code thallus+NAME://host:port}. */
  public static Location parse(String uri) {
    URI parsed;
    try {
      parsed = new URI(uri);
    } catch (URISyntaxException e) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "not a Thallus location: " + uri, e);
    }
    String scheme = parsed.getScheme();
    if (scheme == null || !(scheme.equals(SCHEME) || scheme.startsWith(SCHEME + "+"))) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT,
          "not a Thallus location: " + uri + " (expected thallus://host:port or thallus+TRANSPORT://host:port)");
    }
    if (parsed.getHost() == null || parsed.getPort() < 0) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "a Thallus location needs host and port: " + uri);
    }
    String transport = scheme.equals(SCHEME) ? null : scheme.substring(SCHEME.length() + 1);
    if (transport != null && transport.isEmpty()) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "empty transport name in " + uri);
    }
    return new Location(parsed.getHost(), parsed.getPort(), transport);
  }

  public String host() {
    return host;
  }

  public int port() {
    return port;
  }

  /** The transport asked for, or empty for "the best one". */
  public Optional<String> transport() {
    return Optional.ofNullable(transport);
  }

  public Location withTransport(String name) {
    return name == null ? new Location(host, port, null) : new Location(host, port, name);
  }

  public URI toUri() {
    return URI.create(toString());
  }

  @Override
  public String toString() {
    String h = host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
    return (transport == null ? SCHEME : SCHEME + "+" + transport) + "://" + h + ":" + port;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Location other
        && host.equals(other.host) && port == other.port && Objects.equals(transport, other.transport);
  }

  @Override
  public int hashCode() {
    return Objects.hash(host, port, transport);
  }
}
