package io.thallus.internal.server;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;

/**
 * The folder a server serves datasets from. A dataset name is a relative path below it, possibly a glob; anything
 * that would leave it (absolute paths, {@code ..}, symbolic links pointing out) is refused.
 */
public final class DataRoot {
  private final Path root;

  public DataRoot(Path root) {
    try {
      this.root = root.toRealPath();
    } catch (IOException e) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "data root " + root + " does not exist", e);
    }
    if (!Files.isDirectory(this.root)) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "data root " + root + " is not a directory");
    }
  }

  public Path path() {
    return root;
  }

  /** The dataset's real path under the root, or a PERMISSION_DENIED / NOT_FOUND error that names it. */
  public Path resolve(String dataset) {
    if (dataset.isBlank()) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "empty dataset name");
    }
    Path relative;
    try {
      relative = Path.of(dataset);
    } catch (InvalidPathException e) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "not a dataset path: " + dataset, e);
    }
    if (relative.isAbsolute()) {
      throw ThallusException.of(StatusCode.PERMISSION_DENIED,
          "dataset " + dataset + " is an absolute path; datasets are paths relative to the server's data root");
    }
    Path candidate = root.resolve(relative).normalize();
    if (!candidate.startsWith(root)) {
      throw ThallusException.of(StatusCode.PERMISSION_DENIED, "dataset " + dataset + " is outside the data root");
    }
    boolean glob = dataset.indexOf('*') >= 0 || dataset.indexOf('?') >= 0 || dataset.indexOf('[') >= 0;
    Path existing = glob ? firstConcreteParent(candidate) : candidate;
    Path real;
    try {
      real = existing.toRealPath();
    } catch (IOException e) {
      throw ThallusException.of(StatusCode.NOT_FOUND, "dataset " + dataset + " does not exist under the data root");
    }
    if (!real.startsWith(root)) {
      throw ThallusException.of(StatusCode.PERMISSION_DENIED,
          "dataset " + dataset + " leads outside the data root through a symbolic link");
    }
    return glob ? real.resolve(existing.relativize(candidate)) : real;
  }

  private static Path firstConcreteParent(Path path) {
    Path current = path;
    while (current != null) {
      String name = current.getFileName() == null ? "" : current.getFileName().toString();
      if (name.indexOf('*') < 0 && name.indexOf('?') < 0 && name.indexOf('[') < 0
          && (current.getParent() == null || noGlob(current))) {
        return current;
      }
      current = current.getParent();
    }
    throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "no directory in dataset glob " + path);
  }

  private static boolean noGlob(Path path) {
    String text = path.toString();
    return text.indexOf('*') < 0 && text.indexOf('?') < 0 && text.indexOf('[') < 0;
  }
}
