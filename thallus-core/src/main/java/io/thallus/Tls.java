package io.thallus;

import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import javax.net.ssl.SSLException;

/**
 * TLS for the control connection. A server presents a certificate chain and key (PEM files); a client verifies it
 * against trusted certificates (a PEM file, or the JDK's trust store) and, unless told otherwise, checks that the
 * certificate names the host it connected to.
 *
 * <p>Only transports whose batch bodies stay protected are offered under TLS: ipc (inside the TLS connection) and
 * the same-host shm and cma. tcp and rdma move bodies outside the control connection, so a TLS server refuses
 * them rather than send data in the clear.
 */
public final class Tls {
  private final SslContext context;
  private final boolean verifyHostname;
  private final Path trusted;

  private Tls(SslContext context, boolean verifyHostname, Path trusted) {
    this.context = context;
    this.verifyHostname = verifyHostname;
    this.trusted = trusted;
  }

  /** A server's side: its certificate chain and PKCS#8 private key, both PEM files. */
  public static Tls server(Path certificateChain, Path privateKey) {
    requireFile(certificateChain, "certificate chain");
    requireFile(privateKey, "private key");
    try {
      return new Tls(SslContextBuilder.forServer(certificateChain.toFile(), privateKey.toFile()).build(), false, null);
    } catch (SSLException | IllegalArgumentException e) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "cannot use " + certificateChain + " and "
          + privateKey + " for TLS: " + e.getMessage(), e);
    }
  }

  /** A client trusting the certificates in {@code trustedCertificates} (PEM), verifying the host name. */
  public static Tls client(Path trustedCertificates) {
    requireFile(trustedCertificates, "trusted certificates");
    return client(trustedCertificates, true);
  }

  /** A client trusting the JDK's default certificate authorities, verifying the host name. */
  public static Tls client() {
    return client(null, true);
  }

  private static Tls client(Path trusted, boolean verifyHostname) {
    try {
      SslContextBuilder builder = SslContextBuilder.forClient()
          .endpointIdentificationAlgorithm(verifyHostname ? "HTTPS" : null);
      if (trusted != null) {
        builder.trustManager(trusted.toFile());
      }
      return new Tls(builder.build(), verifyHostname, trusted);
    } catch (SSLException | IllegalArgumentException e) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "cannot trust "
          + (trusted == null ? "the JDK's certificate authorities" : trusted) + ": " + e.getMessage(), e);
    }
  }

  /**
   * The same trust, without checking that the certificate names the host (for servers reached by an address their
   * certificate does not list). The certificate itself is still verified.
   */
  public Tls withoutHostnameVerification() {
    if (context.isServer()) {
      throw new IllegalStateException("host names are verified by clients; this is a server's TLS");
    }
    return client(trusted, false);
  }

  /** The Netty context; for the server and client internals. */
  public SslContext context() {
    return context;
  }

  public boolean verifiesHostname() {
    return verifyHostname;
  }

  private static void requireFile(Path file, String what) {
    if (!Files.isReadable(file)) {
      throw ThallusException.of(StatusCode.NOT_FOUND, "the TLS " + what + " file " + file
          + " does not exist or cannot be read");
    }
  }
}
