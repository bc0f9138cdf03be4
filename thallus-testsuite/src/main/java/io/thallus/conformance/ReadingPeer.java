package io.thallus.conformance;

import io.thallus.Location;
import io.thallus.QueryRequest;
import io.thallus.ThallusClient;
import io.thallus.ThallusStream;
import io.thallus.testing.JvmFlags;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * A client in a process of its own that starts a large read, takes one batch, says {@value #READING} and waits to be
 * killed: a peer that vanishes mid-stream without a word, as a crashed or SIGKILLed client does. Its process, on this
 * JVM's class path and flags, is started and killed by {@link #start} and {@link #kill}.
 */
final class ReadingPeer implements AutoCloseable {
  static final String READING = "reading";
  /** Long enough for any test to kill it, short enough that a forgotten one goes by itself. */
  private static final long WAIT_TO_BE_KILLED_MINUTES = 10;

  private final Process process;
  private final Path output;

  private ReadingPeer(Process process, Path output) {
    this.process = process;
    this.output = output;
  }

  /** {@code thallus+TRANSPORT://HOST:PORT}, the query, its batch rows. */
  public static void main(String[] args) throws InterruptedException {
    try (BufferAllocator allocator = new RootAllocator();
         ThallusClient client = ThallusClient.connect(allocator, Location.parse(args[0]))) {
      ThallusStream stream = client.query(QueryRequest.builder(args[1]).batchRows(Integer.parseInt(args[2])).build());
      try (VectorSchemaRoot first = stream.next()) {
        System.out.println(READING + " " + first.getRowCount() + " rows over " + stream.transport());
      }
      Thread.sleep(TimeUnit.MINUTES.toMillis(WAIT_TO_BE_KILLED_MINUTES));
      System.out.println("never killed");
      System.exit(1);
    }
  }

  /** Starts the peer's process: it reads {@code sql} from {@code location}. */
  static ReadingPeer start(Location location, String sql, int batchRows) throws IOException {
    List<String> command = new ArrayList<>();
    command.add(ProcessHandle.current().info().command().orElse("java"));
    command.addAll(JvmFlags.forChild());
    command.addAll(List.of("-Xmx512m", "-XX:-UsePerfData", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
        "-cp", System.getProperty("java.class.path"), ReadingPeer.class.getName(), location.toString(), sql,
        Integer.toString(batchRows)));
    // Its output goes to a file, read with a deadline: no thread blocks on a pipe of a process that may hang.
    Path output = Files.createTempFile("reading-peer", ".log");
    Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile()).start();
    return new ReadingPeer(process, output);
  }

  /** Waits until the peer has its first batch; fails with what it printed if it ends or the deadline passes. */
  void awaitReading(long seconds) throws InterruptedException, IOException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (!printed().contains(READING)) {
      if (!process.isAlive() || System.nanoTime() > deadline) {
        throw new AssertionError("the reading peer did not start reading within " + seconds + " s"
            + (process.isAlive() ? "" : " (it exited " + process.exitValue() + ")") + "; it printed:\n" + printed());
      }
      Thread.sleep(100);
    }
  }

  private String printed() throws IOException {
    return Files.readString(output, StandardCharsets.UTF_8);
  }

  /** SIGKILL: the process ends without closing anything; its kernel drops its connections. */
  void kill() throws InterruptedException {
    process.destroyForcibly();
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      throw new AssertionError("the reading peer " + process.pid() + " did not die within 30 s of SIGKILL");
    }
  }

  @Override
  public void close() throws InterruptedException, IOException {
    try {
      if (process.isAlive()) {
        kill();
      }
    } finally {
      Files.deleteIfExists(output);
    }
  }
}
