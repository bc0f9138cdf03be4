package io.thallus.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A Python virtual environment with pinned packages from PyPI, made by the test that needs it under target/ and kept
 * there between runs (made anew when its list of packages changes), and the commands run in it.
 */
public final class PythonVenv {
  private final Path python;

  private PythonVenv(Path python) {
    this.python = python;
  }

  /** The environment {@code target/NAME} with exactly {@code packages} asked for, made once. */
  public static PythonVenv of(String name, List<String> packages) throws IOException, InterruptedException {
    Path venv = Path.of("target", name).toAbsolutePath();
    Path python = venv.resolve("bin/python");
    Path stamp = venv.resolve("thallus-packages.txt");
    String wanted = String.join("\n", packages);
    if (!Files.isExecutable(python) || !Files.exists(stamp) || !Files.readString(stamp).equals(wanted)) {
      run(List.of("python3", "-m", "venv", "--clear", venv.toString()), 2);
      List<String> install = new ArrayList<>(List.of(python.toString(), "-m", "pip", "install", "--quiet",
          "--disable-pip-version-check"));
      install.addAll(packages);
      run(install, 10);
      Files.writeString(stamp, wanted);
    }
    return new PythonVenv(python);
  }

  /** The environment's Python interpreter. */
  public Path python() {
    return python;
  }

  /** Runs {@code script} with {@code args} in the environment; its output lines, or an error with them. */
  public List<String> runScript(Path script, List<String> args, long minutes) throws IOException,
      InterruptedException {
    List<String> command = new ArrayList<>(List.of(python.toString(), script.toString()));
    command.addAll(args);
    return run(command, minutes);
  }

  /** Runs a command to its end, within {@code minutes}; its output lines (stdout and stderr), or an error with them. */
  public static List<String> run(List<String> command, long minutes) throws IOException, InterruptedException {
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    List<String> lines = new ArrayList<>();
    Thread reader = Thread.ofVirtual().start(() -> {
      try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
          StandardCharsets.UTF_8))) {
        String line;
        while ((line = in.readLine()) != null) {
          synchronized (lines) {
            lines.add(line);
          }
        }
      } catch (IOException e) {
        // The process ended.
      }
    });
    if (!process.waitFor(minutes, TimeUnit.MINUTES)) {
      process.destroyForcibly();
      synchronized (lines) {
        throw new AssertionError(String.join(" ", command) + " ran for " + minutes + " minutes: " + lines);
      }
    }
    reader.join(TimeUnit.SECONDS.toMillis(10));
    synchronized (lines) {
      if (process.exitValue() != 0) {
        throw new AssertionError(String.join(" ", command) + " failed (" + process.exitValue() + "):\n"
            + String.join("\n", lines));
      }
      return List.copyOf(lines);
    }
  }
}
