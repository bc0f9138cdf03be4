package io.thallus.flightsql;

import io.grpc.Attributes;
import io.grpc.Grpc;
import io.grpc.ServerTransportFilter;
import java.net.SocketAddress;

/**
 * Tells the session registry when a gRPC connection opens and when it ends, by its remote address as
 * {@link ConnectionAddresses} writes it into the calls' headers: a session its client knew only by that connection
 * (it never sent the session's token or cookie) cannot be reached again once the connection is gone, so it is closed
 * then rather than after its idle timeout.
 */
final class ConnectionEnds extends ServerTransportFilter {
  private final SessionRegistry sessions;

  ConnectionEnds(SessionRegistry sessions) {
    this.sessions = sessions;
  }

  @Override
  public Attributes transportReady(Attributes transport) {
    String remote = remote(transport);
    if (remote != null) {
      sessions.connectionOpened(remote);
    }
    return transport;
  }

  @Override
  public void transportTerminated(Attributes transport) {
    String remote = remote(transport);
    if (remote != null) {
      sessions.connectionClosed(remote);
    }
  }

  private static String remote(Attributes transport) {
    if (transport == null) {
      // A connection that ended before gRPC had it ready (a stranger closed at its deadline): no session knew it.
      return null;
    }
    SocketAddress remote = transport.get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
    return remote == null ? null : remote.toString();
  }
}
