package io.thallus.dist;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged tarball as an operator meets it: untarred on a machine with no Java (here: a PATH holding only a
 * shell and the tools bin/thallus uses, and no JAVA_HOME), its demo runs, its server starts with the config it
 * ships, and answers /metrics and /health.
 */
class DistributionIT {
  @TempDir
  static Path temp;

  private static Path home;
  private static Map<String, String> noJava;

  @BeforeAll
  static void untar() throws Exception {
    Path tarball = Path.of(System.getProperty("thallus.dist.tarball"));
    assertThat(tarball).exists();
    run(List.of("tar", "xzf", tarball.toString(), "-C", temp.toString()), Map.of("PATH", "/usr/bin:/bin"), 120);
    home = temp.resolve(System.getProperty("thallus.dist.name"));
    assertThat(home.resolve("runtime/bin/java")).isExecutable();
    assertThat(home.resolve("lib/thallus.jar")).exists();
    assertThat(home.resolve("conf/thallus.properties")).exists();
    // A PATH with a shell and the few tools bin/thallus uses: if anything looked for an installed java, it would not
    // find one.
    Path tools = Files.createDirectories(temp.resolve("tools"));
    for (String tool : List.of("sh", "dirname", "mkdir", "chmod")) {
      Files.createSymbolicLink(tools.resolve(tool), Path.of(which(tool)));
    }
    noJava = Map.of("PATH", tools.toString(), "HOME", temp.toString());
  }

  private static String which(String tool) {
    for (String dir : List.of("/usr/bin", "/bin")) {
      if (Files.isExecutable(Path.of(dir, tool))) {
        return dir + "/" + tool;
      }
    }
    throw new AssertionError("no " + tool + " on this machine");
  }

  /** Runs a command with exactly {@code env}; returns its output, failing on a non-zero exit. */
  private static String run(List<String> command, Map<String, String> env, long seconds) throws Exception {
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    builder.environment().clear();
    builder.environment().putAll(env);
    Path out = Files.createTempFile(temp, "out", ".txt");
    Process process = builder.redirectOutput(out.toFile()).start();
    if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new AssertionError(command + " ran for " + seconds + " s: " + Files.readString(out));
    }
    String output = Files.readString(out);
    assertThat(process.exitValue()).as(command + ": " + output).isZero();
    return output;
  }

  @Test
  void theDemoRunsOnTheShippedRuntime() throws Exception {
    String output = run(List.of(home.resolve("bin/thallus").toString(), "demo", "--rows", "200000", "--runs", "1",
        "--batch-rows", "16384"), noJava, 300);
    assertThat(output).contains("all checksums agree").contains("tcp").contains("ipc");
  }

  @Test
  void theServerAnswersMetricsAndHealth() throws Exception {
    Path data = Files.createDirectories(temp.resolve("data"));
    ProcessBuilder builder = new ProcessBuilder(home.resolve("bin/thallus").toString(), "serve", "--config",
        home.resolve("conf/thallus.properties").toString(), "--data-root", data.toString(), "--port", "0",
        "--metrics-port", "0").redirectErrorStream(true);
    builder.environment().clear();
    builder.environment().putAll(noJava);
    Process serve = builder.start();
    try (BufferedReader lines = new BufferedReader(new InputStreamReader(serve.getInputStream(),
        StandardCharsets.UTF_8))) {
      List<String> seen = new ArrayList<>();
      String line;
      URI metrics = null;
      while (metrics == null && (line = lines.readLine()) != null) {
        seen.add(line);
        if (line.startsWith("metrics at ")) {
          metrics = URI.create(line.substring("metrics at ".length()).trim());
        }
      }
      assertThat(metrics).as("the server's output: " + seen).isNotNull();
      // A JVM crash log goes to a folder only this user opens, outside the data root the server works in.
      Path crashes = temp.resolve(".local/state/thallus/crashes");
      String commandLine = Files.readString(Path.of("/proc/" + serve.pid() + "/cmdline")).replace('\0', ' ');
      assertThat(commandLine).contains("-XX:ErrorFile=" + crashes.resolve("hs_err_pid%p.log"));
      assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(crashes))).isEqualTo("rwx------");
      HttpClient http = HttpClient.newHttpClient();
      HttpResponse<String> scraped = http.send(HttpRequest.newBuilder(metrics).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(scraped.statusCode()).isEqualTo(200);
      assertThat(scraped.body()).contains("thallus_streams_open", "thallus_batch_memory_budget_bytes");
      HttpResponse<String> health = http.send(HttpRequest.newBuilder(metrics.resolve("/health")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(health.statusCode()).isEqualTo(200);
    } catch (IOException e) {
      throw new AssertionError(e);
    } finally {
      serve.destroy();
      if (!serve.waitFor(20, TimeUnit.SECONDS)) {
        serve.destroyForcibly();
      }
    }
  }

  /**
   * Issue 35: {@code bin/thallus serve --config conf/thallus.properties}, run from the untarred folder as the README
   * says, serves the data/ folder the tarball ships (the config names ./data). Only the port is moved off 47470, which
   * another process on a test machine may hold.
   */
  @Test
  void theServerStartsWithTheShippedConfig() throws Exception {
    assertThat(home.resolve("data")).isDirectory();
    ProcessBuilder builder = new ProcessBuilder(home.resolve("bin/thallus").toString(), "serve", "--config",
        "conf/thallus.properties", "--port", "0").directory(home.toFile()).redirectErrorStream(true);
    builder.environment().clear();
    builder.environment().putAll(noJava);
    Process serve = builder.start();
    try (BufferedReader lines = new BufferedReader(new InputStreamReader(serve.getInputStream(),
        StandardCharsets.UTF_8))) {
      List<String> seen = new ArrayList<>();
      String serving = null;
      String line;
      // Ends at the first line naming the server, or when the process ends (its output closes).
      while (serving == null && (line = lines.readLine()) != null) {
        seen.add(line);
        if (line.startsWith("thallus serving ")) {
          serving = line;
        }
      }
      assertThat(serving).as("the server's output: " + seen).isNotNull();
      Path served = Path.of(serving.substring("thallus serving ".length()).split(" at ")[0]);
      assertThat(served.toRealPath()).isEqualTo(home.resolve("data").toRealPath());
      assertThat(serve.isAlive()).isTrue();
    } finally {
      serve.destroy();
      if (!serve.waitFor(20, TimeUnit.SECONDS)) {
        serve.destroyForcibly();
      }
    }
  }
}
