package io.thallus.spi;

import java.util.Map;

/**
 * A way to move batch bodies between server and client, found with {@link java.util.ServiceLoader} by its name
 * ({@code thallus+NAME://}). The control protocol is the same for all of them: HELLO offers transports with their
 * parameters, WELCOME names the chosen one with the server's parameters, and every BATCH message carries the
 * layout whose buffers this transport moves.
 */
public interface Transport {
  /** The name in {@code thallus+NAME://} and in HELLO/WELCOME. */
  String name();

  /** Higher is preferred when the client asks for the best transport ({@code thallus://}). */
  int preference();

  /**
   * Whether batch bodies stay protected when the control connection uses TLS: they travel inside it, or never leave
   * the host. A TLS server offers only transports that say yes.
   */
  default boolean confidentialUnderTls() {
    return false;
  }

  /**
   * Whether this transport can serve a client connecting to {@code host}: same-host transports say no for remote
   * hosts, device transports say no without a device. Cheap; called for every connection.
   */
  default boolean isAvailableFor(String host) {
    return true;
  }

  /**
   * Whether this transport moves no bodies of its own: every batch travels inside its BATCH frame serialized as Arrow
   * IPC messages, which core writes and reads (the ipc baseline). Its sessions are never asked to place or fetch.
   */
  default boolean serializesBatches() {
    return false;
  }

  /** Starts this transport's server side; called once when a server starts. */
  ServerTransport startServer(ServerTransport.Context context);

  /** Prepares a client offer for one connection; it becomes a session if the server accepts this transport. */
  ClientOffer offer(ClientOffer.Context context);

  /**
   * The transports on the class path (found with {@link java.util.ServiceLoader}), best first: the named ones, or all
   * of them for an empty list. An unknown name is an error that lists the known.
   */
  static java.util.List<Transport> installed(java.util.List<String> names) {
    return io.thallus.internal.Transports.enabled(names);
  }

  /**
   * The value of a parameter, or an error naming it. Parameters are namespaced by transport name
   * ({@code "tcp.port"}) so several offers fit in one HELLO.
   */
  static String requireParameter(Map<String, String> parameters, String key) {
    String value = parameters.get(key);
    if (value == null) {
      throw io.thallus.ThallusException.of(io.thallus.StatusCode.PROTOCOL_ERROR, "missing transport parameter " + key);
    }
    return value;
  }
}
