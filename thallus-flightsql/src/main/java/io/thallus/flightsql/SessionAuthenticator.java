package io.thallus.flightsql;

import io.thallus.server.Authentication;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import org.apache.arrow.flight.CallHeaders;
import org.apache.arrow.flight.auth2.CallHeaderAuthenticator;

/**
 * Turns a call's headers into its session. A bearer token or cookie this server issued names a session; so does
 * the call's connection with the same credentials as the call that opened the session there (clients that keep
 * neither, such as Arrow Java's FlightClient without authentication). Any other call opens a new session on a
 * native connection made with its credentials (HTTP Basic user and password, a bearer token of the native
 * server's, or none), so the native server decides who gets in. The new session's id goes back
 * as {@code authorization: Bearer <id>} (what Flight clients keep after Basic authentication) and as a cookie (what
 * the Flight SQL JDBC driver keeps without credentials).
 *
 * <p>With HTTP Basic, a server that takes a token but no users accepts the token as the password, whatever the
 * user name: tools that only know user and password fields can still log in.
 */
final class SessionAuthenticator implements CallHeaderAuthenticator {
  static final String COOKIE = "thallus_flight_session";
  private static final String AUTHORIZATION = "authorization";

  private final SessionRegistry sessions;
  private final FlightAdmission admission;

  SessionAuthenticator(SessionRegistry sessions, FlightAdmission admission) {
    this.sessions = sessions;
    this.admission = admission;
  }

  @Override
  public AuthResult authenticate(CallHeaders headers) {
    AuthResult result = sessionOf(headers);
    // Only a call that found or opened a session makes its connection no stranger.
    admission.authenticated(headers.get(ConnectionAddresses.HEADER));
    return result;
  }

  private AuthResult sessionOf(CallHeaders headers) {
    String authorization = headers.get(AUTHORIZATION);
    FlightSession known = null;
    if (authorization != null && authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
      known = sessions.session(authorization.substring(7).strip());
    }
    if (known == null) {
      // The session cookie is as secret as the bearer token; a client may send it beside the native token.
      known = sessions.session(cookie(headers.get("cookie")));
    }
    if (known != null) {
      // Its client holds its id: it may come back on another connection, so the session outlives this one.
      known.named();
      return result(known, false);
    }
    // A client that kept neither: the session its connection opened with the same credentials.
    String connection = connectionKey(headers.get(ConnectionAddresses.HEADER), authorization);
    known = connection == null ? null : sessions.byConnection(connection);
    if (known != null) {
      return result(known, false);
    }
    try {
      FlightSession opened = open(authorization, headers.get(ConnectionAddresses.HOST_HEADER));
      if (connection == null) {
        return result(opened, true);
      }
      FlightSession bound = sessions.bindConnection(headers.get(ConnectionAddresses.HEADER), connection, opened);
      if (bound == null) {
        throw ThallusException.of(StatusCode.UNAVAILABLE, "the connection closed while its session was opened");
      }
      return result(bound, bound == opened);
    } catch (ThallusException e) {
      throw FlightErrors.of(e);
    }
  }

  /**
   * The call's connection and a digest of its credentials: the same client on the same connection. Null outside a
   * gRPC call (no address known).
   */
  private static String connectionKey(String remote, String authorization) {
    if (remote == null) {
      return null;
    }
    try {
      byte[] digest = java.security.MessageDigest.getInstance("SHA-256").digest(
          (authorization == null ? "" : authorization).getBytes(StandardCharsets.UTF_8));
      return remote + "|" + java.util.HexFormat.of().formatHex(digest);
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JDK has no SHA-256", e);
    }
  }

  /** A new session for the client at {@code address} (its IP; null outside a gRPC call). */
  private FlightSession open(String authorization, String address) {
    if (authorization == null) {
      return sessions.open(Map.of(), "flight-sql", address);
    }
    if (authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
      return sessions.open(Map.of(Authentication.TOKEN, authorization.substring(7).strip()), "flight-sql", address);
    }
    if (authorization.regionMatches(true, 0, "Basic ", 0, 6)) {
      String decoded;
      try {
        decoded = new String(Base64.getDecoder().decode(authorization.substring(6).strip()), StandardCharsets.UTF_8);
      } catch (IllegalArgumentException e) {
        throw ThallusException.of(StatusCode.UNAUTHENTICATED, "the Basic credentials are not base64");
      }
      int colon = decoded.indexOf(':');
      String user = colon < 0 ? decoded : decoded.substring(0, colon);
      String password = colon < 0 ? "" : decoded.substring(colon + 1);
      try {
        return sessions.open(Map.of(Authentication.USER, user, Authentication.PASSWORD, password),
            "flight-sql " + user, address);
      } catch (ThallusException e) {
        if (e.code() != StatusCode.UNAUTHENTICATED || password.isEmpty()) {
          throw e;
        }
        return sessions.open(Map.of(Authentication.TOKEN, password), "flight-sql " + user, address);
      }
    }
    throw ThallusException.of(StatusCode.UNAUTHENTICATED, "authentication failed: the authorization header is "
        + "neither Basic nor Bearer");
  }

  private static AuthResult result(FlightSession session, boolean announce) {
    return new AuthResult() {
      @Override
      public String getPeerIdentity() {
        return session.id();
      }

      @Override
      public void appendToOutgoingHeaders(CallHeaders outgoing) {
        if (announce) {
          outgoing.insert(AUTHORIZATION, "Bearer " + session.id());
          outgoing.insert("set-cookie", COOKIE + "=" + session.id() + "; Path=/; HttpOnly");
        }
      }
    };
  }

  private static String cookie(String header) {
    if (header == null) {
      return null;
    }
    for (String part : header.split(";")) {
      String pair = part.strip();
      if (pair.startsWith(COOKIE + "=")) {
        return pair.substring(COOKIE.length() + 1);
      }
    }
    return null;
  }
}
