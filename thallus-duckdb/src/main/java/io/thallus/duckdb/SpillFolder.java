package io.thallus.duckdb;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.internal.transport.shm.StaleFolders;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * Where one DuckDB instance spills: a folder only this process's user can open, never under the data root.
 *
 * <p>It cannot be kept from SQL: DuckDB adds its {@code temp_directory} to {@code allowed_directories} when
 * external access is switched off, and its own spill files pass the same path check as SQL's file functions (a
 * directory it may not reach is one it cannot spill to). So a client that may run SQL can list, read and write the
 * spill files by the folder's real name; the folder's mode keeps other users of the machine out.
 *
 * <p>For an in-memory database it is {@code thallus-duckdb-spill-<pid>-<hex>} under {@code java.io.tmpdir}, mode
 * 0700, named for this process so that a later start removes it if this process dies (see {@link StaleFolders});
 * beside a database file it is DuckDB's own {@code <file>.tmp}, on the disk the database is on.
 */
final class SpillFolder implements AutoCloseable {
  static final String PREFIX = "thallus-duckdb-spill-";
  private static final SecureRandom RANDOM = new SecureRandom();

  private final Path directory;
  private final boolean ours;

  private SpillFolder(Path directory, boolean ours) {
    this.directory = directory;
    this.ours = ours;
  }

  /** Removes the spill folders that servers of this user left under {@code java.io.tmpdir} when they were killed. */
  static void sweepStale() {
    StaleFolders.sweep(temp(), PREFIX);
  }

  private static Path temp() {
    return Path.of(System.getProperty("java.io.tmpdir")).toAbsolutePath();
  }

  /** A new folder under {@code java.io.tmpdir}. */
  static SpillFolder inTemp(Path filesRoot) {
    Path base = temp();
    byte[] suffix = new byte[8];
    RANDOM.nextBytes(suffix);
    Path folder = base.resolve(PREFIX + ProcessHandle.current().pid() + "-" + HexFormat.of().formatHex(suffix));
    checkOutside(folder, filesRoot, "start the server with java.io.tmpdir (-Djava.io.tmpdir=...) outside it");
    try {
      Files.createDirectory(folder, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    } catch (IOException | UnsupportedOperationException e) {
      throw ThallusException.of(StatusCode.INTERNAL, "cannot create DuckDB's spill folder under " + base + ": " + e,
          e);
    }
    return new SpillFolder(folder, true);
  }

  /**
   * DuckDB's {@code <file>.tmp} beside a database file, created 0700 if missing (a read-only database in a folder
   * this user cannot write leaves it to DuckDB, should it ever spill). DuckDB removes its spill files itself.
   */
  static SpillFolder beside(Path databaseFile, Path filesRoot) {
    Path folder = databaseFile.resolveSibling(databaseFile.getFileName() + ".tmp");
    checkOutside(folder, filesRoot, "keep the database beside the data root");
    if (!Files.isDirectory(folder)) {
      try {
        Files.createDirectory(folder,
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
      } catch (IOException | UnsupportedOperationException e) {
        // DuckDB creates it when it first spills, or says why it cannot.
      }
    }
    return new SpillFolder(folder, false);
  }

  private static void checkOutside(Path folder, Path filesRoot, String remedy) {
    if (filesRoot == null) {
      return;
    }
    Path real;
    try {
      real = folder.getParent().toRealPath().resolve(folder.getFileName());
    } catch (IOException e) {
      throw ThallusException.of(StatusCode.NOT_FOUND, "cannot resolve DuckDB's spill folder " + folder + ": " + e, e);
    }
    if (real.startsWith(filesRoot)) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "DuckDB's spill folder " + real + " would lie under "
          + "the data root " + filesRoot + ", where every client's SQL reads and writes; " + remedy);
    }
  }

  /** The folder DuckDB is given as its {@code temp_directory}. */
  Path directory() {
    return directory;
  }

  /** Removes a folder of this engine's own, with whatever DuckDB left in it. */
  @Override
  public void close() {
    if (!ours) {
      return;
    }
    try (java.util.stream.Stream<Path> paths = Files.walk(directory)) {
      // Files.walk follows no link: a link goes, what it points at stays.
      paths.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
    } catch (IOException | java.io.UncheckedIOException e) {
      // Spill files of a closed DuckDB: nothing reads them again; a leftover is only disk space, and the next
      // start's sweep removes it.
    }
  }
}
