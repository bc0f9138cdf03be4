package io.thallus.flightsql;

import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerStreamTracer;
import java.net.SocketAddress;

/**
 * Writes each call's remote address (its HTTP/2 connection) into the call's headers, where the authenticator reads
 * it: a Flight client makes all its calls on one connection, so a client that keeps neither the bearer token nor
 * the cookie it was given still finds its session, as a JDBC connection keeps one. gRPC starts a stream's tracer
 * before any interceptor (Flight's authentication is one), and the header a client may have sent under this name is
 * dropped first, so no client can claim another's connection.
 */
final class ConnectionAddresses extends ServerStreamTracer.Factory {
  static final String HEADER = "thallus-remote-address";
  /** The IP address alone, which the per-address quotas count by. */
  static final String HOST_HEADER = "thallus-remote-host";
  private static final Metadata.Key<String> KEY = Metadata.Key.of(HEADER, Metadata.ASCII_STRING_MARSHALLER);
  private static final Metadata.Key<String> HOST_KEY = Metadata.Key.of(HOST_HEADER, Metadata.ASCII_STRING_MARSHALLER);

  @Override
  public ServerStreamTracer newServerStreamTracer(String fullMethodName, Metadata headers) {
    headers.discardAll(KEY);
    headers.discardAll(HOST_KEY);
    return new ServerStreamTracer() {
      @Override
      public void serverCallStarted(ServerCallInfo<?, ?> callInfo) {
        SocketAddress remote = callInfo.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
        if (remote != null) {
          headers.put(KEY, remote.toString());
          if (remote instanceof java.net.InetSocketAddress inet && inet.getAddress() != null) {
            headers.put(HOST_KEY, inet.getAddress().getHostAddress());
          }
        }
      }
    };
  }
}
