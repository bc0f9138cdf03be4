package io.thallus.testing;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code thallus serve} in a JVM of its own, as an operator runs it, for tests that stop, kill and restart it. The
 * test module that uses it puts thallus-cli on its test class path: this library cannot depend on the CLI (the CLI
 * needs thallus-flightsql, whose tests need this library).
 */
public final class ServeProcess {
  private static final String THALLUS_CLI = "io.thallus.cli.ThallusCli";

  private ServeProcess() {}

  /** Serves {@code root} and the database file on {@code port} (0: any) over tcp, with {@code extra} flags. */
  public static ChildJvm start(Path root, Path database, int port, String... extra) throws IOException {
    List<String> args = new ArrayList<>(List.of("serve", "--data-root", root.toString(), "--port",
        Integer.toString(port), "--transports", "tcp", "--database", database.toString()));
    args.addAll(List.of(extra));
    return ChildJvm.start(THALLUS_CLI, args.toArray(String[]::new));
  }

  /** Waits for the server to listen and answers its JDBC URL. */
  public static String jdbcUrl(ChildJvm serve) throws InterruptedException {
    String serving = serve.awaitLine("thallus serving", 60);
    String location = serving.substring(serving.indexOf("thallus://") + "thallus://".length(),
        serving.indexOf(" over "));
    return "jdbc:thallus://" + location.replaceAll("\\?.*", "").replaceAll("/$", "");
  }

  /** A port free right now, for a server that must come back on the same one. */
  public static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
