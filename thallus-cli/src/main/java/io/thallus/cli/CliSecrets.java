package io.thallus.cli;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

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

  /**
   * Users and their passwords, one {@code user:password} a line (blank lines and lines starting with {@code #} are
   * skipped); the password is everything after the first colon.
   */
  static Map<String, String> users(Path file) throws IOException {
    if (!Files.isReadable(file)) {
      throw ThallusException.of(StatusCode.NOT_FOUND, "users file " + file + " does not exist or cannot be read");
    }
    Map<String, String> users = new LinkedHashMap<>();
    List<String> lines = Files.readAllLines(file);
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i).strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      int colon = line.indexOf(':');
      if (colon <= 0 || colon == line.length() - 1) {
        throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "users file " + file + ", line " + (i + 1)
            + ": not user:password");
      }
      if (users.putIfAbsent(line.substring(0, colon), line.substring(colon + 1)) != null) {
        throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "users file " + file + ", line " + (i + 1)
            + ": user " + line.substring(0, colon) + " is named twice");
      }
    }
    if (users.isEmpty()) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "users file " + file + " names no user");
    }
    return users;
  }
}
