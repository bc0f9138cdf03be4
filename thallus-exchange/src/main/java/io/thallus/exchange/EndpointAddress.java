package io.thallus.exchange;

import java.util.Objects;

/** Where an exchange endpoint listens: the host its peers reach it at and its port. */
public record EndpointAddress(String host, int port) {
  public EndpointAddress {
    Objects.requireNonNull(host, "host");
    if (host.isBlank()) {
      throw new IllegalArgumentException("an endpoint's host is blank");
    }
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("an endpoint's port is " + port + ", not 1 to 65535");
    }
  }

  /** Parses {@code host:port} (what {@link #toString()} writes). */
  public static EndpointAddress parse(String text) {
    int colon = text.lastIndexOf(':');
    if (colon <= 0) {
      throw new IllegalArgumentException("an endpoint address is host:port, not '" + text + "'");
    }
    try {
      return new EndpointAddress(text.substring(0, colon), Integer.parseInt(text.substring(colon + 1)));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("an endpoint address is host:port, not '" + text + "'", e);
    }
  }

  @Override
  public String toString() {
    return host + ":" + port;
  }
}
