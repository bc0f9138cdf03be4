package io.thallus.cli;

import io.thallus.ClientOptions;
import io.thallus.Tls;
import java.io.IOException;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** How a client command reaches a server that wants a secret or TLS: one set of options for query and load. */
final class ConnectionOptions {
  @Option(names = "--token-file", description = "Send the secret in this file (its first line) to the server.")
  Path tokenFile;

  @Option(names = "--tls-trust", description = "Speak TLS, trusting the certificates in this PEM file.")
  Path tlsTrust;

  ClientOptions clientOptions() throws IOException {
    ClientOptions.Builder options = ClientOptions.builder();
    if (tokenFile != null) {
      options.token(CliSecrets.firstLine(tokenFile));
    }
    if (tlsTrust != null) {
      options.tls(Tls.client(tlsTrust));
    }
    return options.build();
  }
}
