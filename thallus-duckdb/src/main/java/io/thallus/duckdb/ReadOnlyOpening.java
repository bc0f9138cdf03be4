package io.thallus.duckdb;

import io.thallus.internal.transport.shm.StaleFolders;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opens a database file read-only under a name SQL can never use for it. DuckDB admits the file it opened, and that
 * file's WAL names, to every SQL statement that takes a path, resolved to their real names when external access is
 * switched off. A read-only DuckDB reads the file and its WAL only while it opens them (after that it holds the file
 * open and writes nothing), so it is given hard links in a private folder beside the file, {@code
 * .<file>.thallus-<pid>-<hex>}, and the links and the folder are removed before access is locked: the names DuckDB
 * admits then lead nowhere, and the file's own names were never admitted. The links are the same file (no copy), and
 * a folder a killed server left is removed at the next start, its links only (see {@link StaleFolders}).
 */
final class ReadOnlyOpening implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ReadOnlyOpening.class);
  private static final SecureRandom RANDOM = new SecureRandom();
  /** The WAL's names, as DuckDB derives them from the database's. */
  private static final List<String> WAL_SUFFIXES = List.of(".wal", ".wal.checkpoint", ".wal.recovery");

  private final Path file;
  private final Path folder;

  private ReadOnlyOpening(Path file, Path folder) {
    this.file = file;
    this.folder = folder;
  }

  /**
   * Links {@code file} and its WAL into a new private folder beside it. Where that cannot be done (a folder this user
   * cannot write, a file system without hard links), DuckDB opens the file by its own name and SQL can reach it, as
   * a warning says.
   */
  static ReadOnlyOpening of(Path file) {
    Path directory = file.getParent();
    String prefix = "." + file.getFileName() + ".thallus-";
    StaleFolders.sweep(directory, prefix);
    byte[] suffix = new byte[8];
    RANDOM.nextBytes(suffix);
    Path folder = directory.resolve(prefix + ProcessHandle.current().pid() + "-" + HexFormat.of().formatHex(suffix));
    ReadOnlyOpening opening = new ReadOnlyOpening(file, folder);
    try {
      Files.createDirectory(folder, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
      for (String name : names()) {
        Path existing = directory.resolve(file.getFileName() + name);
        if (Files.exists(existing, LinkOption.NOFOLLOW_LINKS)) {
          Files.createLink(folder.resolve(file.getFileName() + name), existing);
        }
      }
      return opening;
    } catch (IOException | UnsupportedOperationException e) {
      opening.close();
      LOG.warn("serving {} read-only by its own name, which clients' SQL can read (read_blob): cannot link it into {}"
          + ": {}", file, folder, e.toString());
      return new ReadOnlyOpening(file, null);
    }
  }

  private static List<String> names() {
    List<String> names = new ArrayList<>(List.of(""));
    names.addAll(WAL_SUFFIXES);
    return names;
  }

  /** The name DuckDB opens the database by. */
  Path path() {
    return folder == null ? file : folder.resolve(file.getFileName());
  }

  /** Removes the links and their folder: once DuckDB has opened the database, and before its access is locked. */
  @Override
  public void close() {
    if (folder == null) {
      return;
    }
    try {
      for (String name : names()) {
        Files.deleteIfExists(folder.resolve(file.getFileName() + name));
      }
      Files.deleteIfExists(folder);
    } catch (IOException e) {
      throw io.thallus.ThallusException.of(io.thallus.StatusCode.INTERNAL, "cannot remove " + folder
          + ", the private links DuckDB opened " + file + " by: " + e, e);
    }
  }
}
