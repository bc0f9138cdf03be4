package io.thallus.benchmarks;

import io.thallus.Location;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Thallus server ({@link ShardServerMain}, what {@code thallus serve} starts) in a process of its own, pinned to
 * {@code cpus} with {@code taskset} (the JVM of this process, its class path and Arrow's flags), DuckDB limited to as
 * many threads as it has cores. Started on port 0;
 * its location is read from the line the command prints once it serves. Closing stops it (SIGTERM: the server's
 * shutdown hook closes it), forcibly after 20 s.
 */
final class ShardServerProcess implements AutoCloseable {
  private static final Pattern SERVING = Pattern.compile("^thallus serving .* at (thallus://\\S+) over .*$");

  private final Process process;
  private final Location location;

  private ShardServerProcess(Process process, Location location) {
    this.process = process;
    this.location = location;
  }

  /**
   * Starts a server on {@code cpus} (a taskset list, e.g. {@code 0-3}) with {@code threads} DuckDB threads over
   * {@code dataRoot}, declaring {@code shards} ({@code NAME=PART:PATH} each); its output goes to {@code log}.
   */
  static ShardServerProcess start(String cpus, int threads, Path dataRoot, List<String> shards, Path log)
      throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of("taskset", "-c", cpus,
        ProcessHandle.current().info().command().orElseThrow(), "-Xmx4g", "-XX:MaxDirectMemorySize=8g"));
    for (String flag : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (flag.startsWith("--add-opens") || flag.startsWith("--enable-native-access")
          || flag.startsWith("--sun-misc-unsafe-memory-access") || flag.startsWith("-Dorg.slf4j")) {
        command.add(flag);
      }
    }
    command.addAll(List.of("-cp", System.getProperty("java.class.path"), ShardServerMain.class.getName(),
        dataRoot.toString(), Integer.toString(threads)));
    command.addAll(shards);
    Process process = new ProcessBuilder(command).redirectError(log.toFile()).start();
    CompletableFuture<Location> serving = new CompletableFuture<>();
    Thread reader = new Thread(() -> {
      try (BufferedReader lines = new BufferedReader(new InputStreamReader(process.getInputStream(),
          StandardCharsets.UTF_8))) {
        String line;
        while ((line = lines.readLine()) != null) {
          Matcher m = SERVING.matcher(line);
          if (m.matches()) {
            serving.complete(Location.parse(m.group(1)));
          }
        }
        serving.completeExceptionally(new IOException("the server on cpus " + cpus + " ended before serving; see "
            + log));
      } catch (IOException e) {
        serving.completeExceptionally(e);
      }
    }, "shard-server-output");
    reader.setDaemon(true);
    reader.start();
    try {
      return new ShardServerProcess(process, serving.get(2, TimeUnit.MINUTES));
    } catch (TimeoutException | java.util.concurrent.ExecutionException e) {
      process.destroyForcibly();
      throw new IOException("the server on cpus " + cpus + " did not start serving within 2 minutes (see " + log
          + "): " + e.getMessage(), e);
    }
  }

  Location location() {
    return location;
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(20, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      process.waitFor(20, TimeUnit.SECONDS);
    }
  }
}
