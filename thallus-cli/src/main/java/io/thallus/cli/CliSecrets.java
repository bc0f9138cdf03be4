package io.thallus.cli;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Secrets come from files, never from the command line, where every user of the machine could read them. */
final class CliSecrets {
  private CliSecrets() {}

  static String firstLine(Path file) throws IOException {
    if (!Files.isReadable(file)) {
      throw ThallusException.of(StatusCode.NOT_FOUND, "secret file " + file + " does not exist or cannot be read");
    }
    String line = Files.readAllLines(file).stream().findFirst().orElse("").strip();
    if (line.isEmpty()) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "secret file " + file + " is empty");
    }
    return line;
  }
}
