package io.thallus.spark.shuffle;

import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * A gate that Spark tasks wait at until the test opens it. The tasks run in executor JVMs, so the gate is a file the
 * test creates; a task captures the gate (its path as text, so the closure serializes) and polls for the file with a
 * deadline, failing with a clear message if the test never opens it.
 */
record TaskGate(String path) implements Serializable {
  /** How long a task waits for the test at most: minutes, as the loaded box may be slow to reach the gate. */
  static final Duration DEADLINE = Duration.ofMinutes(3);

  /** A closed gate at {@code file}, which must not exist yet. */
  static TaskGate at(Path file) {
    if (Files.exists(file)) {
      throw new IllegalArgumentException("the gate " + file + " is open already");
    }
    return new TaskGate(file.toAbsolutePath().toString());
  }

  /** Inside a task: returns once the test opened the gate; fails after {@link #DEADLINE}. */
  void await() throws InterruptedException {
    long deadline = System.nanoTime() + DEADLINE.toNanos();
    Path file = Path.of(path);
    while (!Files.exists(file)) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the test did not open the gate " + path + " within " + DEADLINE);
      }
      Thread.sleep(20);
    }
  }

  /** From the test: lets every waiting task (and every later one) through. */
  void open() {
    try {
      Files.createFile(Path.of(path));
    } catch (IOException e) {
      throw new UncheckedIOException("could not open the gate " + path, e);
    }
  }
}
