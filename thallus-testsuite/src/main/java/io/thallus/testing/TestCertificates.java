package io.thallus.testing;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.Key;
import java.security.KeyStore;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A self-signed certificate and its key as PEM files, made by the JDK's own {@code keytool} (the real tool, in a
 * process), for the TLS tests.
 */
public record TestCertificates(Path certificate, Path privateKey) {
  private static final char[] PASSWORD = "changeit".toCharArray();

  /** A certificate for {@code subjectAlternativeNames} (keytool's syntax, e.g. "ip:127.0.0.1,dns:localhost"). */
  public static TestCertificates create(Path folder, String name, String subjectAlternativeNames) throws Exception {
    Path store = folder.resolve(name + ".p12");
    Path certificate = folder.resolve(name + ".crt.pem");
    Path key = folder.resolve(name + ".key.pem");
    String keytool = Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
    run(List.of(keytool, "-genkeypair", "-alias", name, "-keyalg", "EC", "-groupname", "secp256r1",
        "-dname", "CN=" + name, "-ext", "SAN=" + subjectAlternativeNames, "-validity", "2",
        "-storetype", "PKCS12", "-keystore", store.toString(), "-storepass", new String(PASSWORD)));
    run(List.of(keytool, "-exportcert", "-rfc", "-alias", name, "-keystore", store.toString(),
        "-storepass", new String(PASSWORD), "-file", certificate.toString()));
    KeyStore keyStore = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(store)) {
      keyStore.load(in, PASSWORD);
    }
    Key privateKey = keyStore.getKey(name, PASSWORD);
    Files.writeString(key, "-----BEGIN PRIVATE KEY-----\n"
        + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(privateKey.getEncoded())
        + "\n-----END PRIVATE KEY-----\n");
    return new TestCertificates(certificate, key);
  }

  private static void run(List<String> command) throws IOException, InterruptedException {
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
      throw new IOException(String.join(" ", command) + " failed: " + output);
    }
  }
}
