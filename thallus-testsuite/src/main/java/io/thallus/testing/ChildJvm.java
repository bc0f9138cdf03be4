package io.thallus.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A second JVM running one of the test mains, so a test can kill a real peer process with SIGKILL. */
public final class ChildJvm implements AutoCloseable {
  private final Process process;
  private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
  /** Reads the child's output into {@link #lines} until its end. */
  private final Thread output;

  private ChildJvm(Process process) {
    this.process = process;
    this.output = Thread.ofPlatform().daemon().name("child-jvm-output").start(() -> {
      try (BufferedReader reader = new BufferedReader(
          new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
        String line;
        while ((line = reader.readLine()) != null) {
          lines.add(line);
        }
      } catch (IOException ignored) {
        // The child is gone; whoever waits for a line times out with what it saw.
      }
    });
  }

  /** Starts {@code main} with this JVM's class path and JVM flags. */
  public static ChildJvm start(Class<?> main, String... args) throws IOException {
    return start(List.of(), System.getProperty("java.class.path"), main, args);
  }

  /**
   * Starts {@code main} behind {@code launcher} (say {@code setpriv} with another user's ids) on {@code classPath},
   * with this JVM's executable and flags.
   */
  public static ChildJvm start(List<String> launcher, String classPath, Class<?> main, String... args)
      throws IOException {
    return start(launcher, classPath, main.getName(), args);
  }

  /**
   * Starts the class named {@code mainClass} on this JVM's class path with its flags: for a main this module cannot
   * compile against (the CLI's, see {@link ServeProcess}).
   */
  public static ChildJvm start(String mainClass, String... args) throws IOException {
    return start(List.of(), System.getProperty("java.class.path"), mainClass, args);
  }

  private static ChildJvm start(List<String> launcher, String classPath, String mainClass, String... args)
      throws IOException {
    List<String> command = new ArrayList<>(launcher);
    command.add(javaExecutable());
    command.addAll(JvmFlags.forChild());
    command.add("-Xmx512m");
    // No /tmp/hsperfdata_<user> left behind, least of all for the other users some tests run children as.
    command.add("-XX:-UsePerfData");
    command.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn");
    command.add("-cp");
    command.add(classPath);
    command.add(mainClass);
    command.addAll(List.of(args));
    return new ChildJvm(new ProcessBuilder(command).redirectErrorStream(true).start());
  }

  /**
   * Starts {@code mainClass} on {@code classPath} in a JVM with no flags at all (no --add-opens, no native or
   * Unsafe access), as a tool that loads a JDBC driver runs.
   */
  public static ChildJvm startWithoutFlags(String classPath, String mainClass, String... args) throws IOException {
    List<String> command = new ArrayList<>(List.of(javaExecutable(), "-Xmx512m", "-XX:-UsePerfData", "-cp",
        classPath, mainClass));
    command.addAll(List.of(args));
    return new ChildJvm(new ProcessBuilder(command).redirectErrorStream(true).start());
  }

  /** The java executable this JVM runs on. */
  public static String javaExecutable() {
    return ProcessHandle.current().info().command().orElse("java");
  }

  /** Waits for a line starting with {@code prefix} and returns it; fails with everything the child printed. */
  public String awaitLine(String prefix, long seconds) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    StringBuilder seen = new StringBuilder();
    while (System.nanoTime() < deadline) {
      String line = lines.poll(200, TimeUnit.MILLISECONDS);
      if (line != null) {
        seen.append(line).append('\n');
        if (line.startsWith(prefix)) {
          return line;
        }
      }
    }
    throw new AssertionError("the child never printed '" + prefix + "'; it printed:\n" + seen);
  }

  /** Every line the child printed since the last call (or since it started), taken out of what later calls see. */
  public List<String> takeLines() {
    List<String> taken = new ArrayList<>();
    lines.drainTo(taken);
    return taken;
  }

  /** Waits for the child to exit; returns its exit code, then everything it printed, one line each. */
  public List<String> awaitExit(long seconds) throws InterruptedException {
    if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
      throw new AssertionError("the child did not exit within " + seconds + " s; it printed:\n"
          + String.join("\n", lines));
    }
    // The output thread may still be draining the pipe after exit: it ends at the pipe's end (unless something the
    // child started still holds the pipe, hence the deadline).
    output.join(Duration.ofSeconds(10));
    List<String> all = new ArrayList<>();
    all.add(Integer.toString(process.exitValue()));
    lines.drainTo(all);
    return all;
  }

  public long pid() {
    return process.pid();
  }

  /** SIGKILL, and wait for the process to be gone. */
  public void kill() throws InterruptedException {
    process.destroyForcibly();
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      throw new AssertionError("child " + process.pid() + " did not die");
    }
  }

  @Override
  public void close() throws InterruptedException {
    if (process.isAlive()) {
      kill();
    }
  }
}
