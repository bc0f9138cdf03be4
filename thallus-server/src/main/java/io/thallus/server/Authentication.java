package io.thallus.server;

import io.thallus.internal.protocol.Protocol;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Who may connect to a server, checked at HELLO before anything else happens on the connection. A client proves
 * itself with a shared secret ({@code token}) or a user name and password; the server keeps only SHA-256 digests
 * and compares them in constant time, so neither the secret nor its length leaks through timing.
 *
 * <pre>{@code
 * ThallusServer.builder(allocator, location).authentication(Authentication.token(System.getenv("THALLUS_TOKEN")))
 * ClientOptions.builder().token(secret)          // or .user("alice", "s3cret")
 * }</pre>
 */
public final class Authentication {
  /** Credential keys a client sends in HELLO. */
  public static final String TOKEN = Protocol.CREDENTIAL_TOKEN;
  public static final String USER = Protocol.CREDENTIAL_USER;
  public static final String PASSWORD = Protocol.CREDENTIAL_PASSWORD;

  private static final Authentication NONE = new Authentication(null, Map.of());
  /** Compared against when a user is unknown, so an unknown user costs what a wrong password costs. */
  private static final byte[] NOBODY = digest("\u0000no such user\u0000");

  private final byte[] tokenDigest;
  private final Map<String, byte[]> passwordDigests;

  private Authentication(byte[] tokenDigest, Map<String, byte[]> passwordDigests) {
    this.tokenDigest = tokenDigest;
    this.passwordDigests = Map.copyOf(passwordDigests);
  }

  /** Anyone may connect (the default; fine on a trusted network or loopback). */
  public static Authentication none() {
    return NONE;
  }

  /** Clients must send this shared secret (or bearer token) as their {@code token} credential. */
  public static Authentication token(String secret) {
    return new Authentication(digest(requireSecret(secret, "token")), Map.of());
  }

  /** Clients must send one of these user names with its password. */
  public static Authentication users(Map<String, String> passwords) {
    Map<String, byte[]> digests = new HashMap<>();
    passwords.forEach((user, password) -> digests.put(Objects.requireNonNull(user, "user"),
        digest(requireSecret(password, "password of " + user))));
    return new Authentication(null, digests);
  }

  /** Accepts what either accepts: e.g. a service token, or people with passwords. */
  public Authentication or(Authentication other) {
    Map<String, byte[]> digests = new HashMap<>(passwordDigests);
    digests.putAll(other.passwordDigests);
    return new Authentication(tokenDigest != null ? tokenDigest : other.tokenDigest, digests);
  }

  /** Whether a server with this setting checks anything at all. */
  public boolean isRequired() {
    return tokenDigest != null || !passwordDigests.isEmpty();
  }

  /** Whether {@code credentials} (as sent in HELLO) prove the client may connect. */
  public boolean accepts(Map<String, String> credentials) {
    return credential(credentials).isPresent();
  }

  /**
   * The credential that {@code credentials} (as sent in HELLO) prove, or empty when they prove nothing: {@code
   * "token"} for the shared secret, whatever user name comes with it (everyone who holds it is one credential),
   * else {@code "user <name>"} for a user's password. A server that checks nothing answers {@code "anyone"}.
   * Quotas per credential count by this name.
   */
  public java.util.Optional<String> credential(Map<String, String> credentials) {
    if (!isRequired()) {
      return java.util.Optional.of("anyone");
    }
    boolean tokenMatches = false;
    String token = credentials.get(TOKEN);
    if (tokenDigest != null && token != null) {
      tokenMatches = MessageDigest.isEqual(tokenDigest, digest(token));
    }
    boolean passwordMatches = false;
    String user = credentials.get(USER);
    String password = credentials.get(PASSWORD);
    if (!passwordDigests.isEmpty() && user != null && password != null) {
      byte[] expected = passwordDigests.getOrDefault(user, NOBODY);
      passwordMatches = MessageDigest.isEqual(expected, digest(password)) && expected != NOBODY;
    }
    if (tokenMatches) {
      return java.util.Optional.of("token");
    }
    return passwordMatches ? java.util.Optional.of("user " + user) : java.util.Optional.empty();
  }

  private static String requireSecret(String secret, String what) {
    if (secret == null || secret.isEmpty()) {
      throw new IllegalArgumentException("an empty " + what + " would let anyone in");
    }
    return secret;
  }

  private static byte[] digest(String text) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }

  @Override
  public String toString() {
    return isRequired() ? "Authentication[" + (tokenDigest != null ? "token" : "") + (tokenDigest != null
        && !passwordDigests.isEmpty() ? ", " : "") + (passwordDigests.isEmpty() ? "" : passwordDigests.size()
        + " user(s)") + "]" : "Authentication[none]";
  }
}
