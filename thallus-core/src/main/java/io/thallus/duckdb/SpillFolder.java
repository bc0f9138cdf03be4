package io.thallus.duckdb;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.internal.transport.shm.StaleFolders;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * Where one DuckDB instance spills, kept out of SQL's reach. DuckDB admits its own {@code temp_directory} to SQL:
 * when external access is switched off it adds the directory to {@code allowed_directories}, resolved (symbolic
 * links followed) at that moment, while its spill files go to the directory's name as given. So DuckDB is given a
 * link, {@link #directory()}, which points at an empty regular file (the decoy) while access is locked and at the
 * real spill directory afterwards: SQL is admitted only to names under the decoy, which no file can have, and every
 * spelling of the real directory resolves outside the admitted names. Neither an unguessable name nor a private
 * mode would do: SQL runs as this process's user.
 *
 * <p>The link and the decoy live in a folder {@code thallus-duckdb-spill-<pid>-<hex>} under {@code java.io.tmpdir},
 * mode 0700, named for this process so that a later start removes it if this process dies (see
 * {@link StaleFolders}); for an in-memory database the spill files go into the same folder.
 */
final class SpillFolder implements AutoCloseable {
  static final String PREFIX = "thallus-duckdb-spill-";
  private static final SecureRandom RANDOM = new SecureRandom();

  private final Path folder;
  private final Path link;
  private final Path decoy;
  private final Path target;

  private SpillFolder(Path folder, Path target) {
    this.folder = folder;
    this.link = folder.resolve("spill");
    this.decoy = folder.resolve("decoy");
    this.target = target;
  }

  /**
   * A new spill folder, after removing the stale ones of servers that were killed. {@code target} is where the
   * spill files go (created 0700 if missing), or null for the folder itself. Neither may lie under the data root,
   * which SQL reaches by any name.
   */
  static SpillFolder create(Path filesRoot, Path target) {
    Path base = Path.of(System.getProperty("java.io.tmpdir")).toAbsolutePath();
    StaleFolders.sweep(base, PREFIX);
    byte[] suffix = new byte[8];
    RANDOM.nextBytes(suffix);
    Path folder = base.resolve(PREFIX + ProcessHandle.current().pid() + "-" + HexFormat.of().formatHex(suffix));
    SpillFolder spill = null;
    try {
      Files.createDirectory(folder, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
      spill = new SpillFolder(folder, target == null ? folder : target);
      Files.createFile(spill.decoy, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("r--------")));
      if (target != null && !Files.isDirectory(target)) {
        try {
          Files.createDirectory(target,
              PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        } catch (IOException e) {
          // A read-only database in a folder this user cannot write: DuckDB tries again if it ever spills.
        }
      }
      spill.checkOutside(filesRoot);
      Files.createSymbolicLink(spill.link, spill.target);
      return spill;
    } catch (IOException | UnsupportedOperationException e) {
      if (spill != null) {
        spill.close();
      }
      throw ThallusException.of(StatusCode.INTERNAL, "cannot create DuckDB's spill folder under " + base + ": " + e,
          e);
    } catch (RuntimeException e) {
      if (spill != null) {
        spill.close();
      }
      throw e;
    }
  }

  private void checkOutside(Path filesRoot) throws IOException {
    if (filesRoot == null) {
      return;
    }
    for (Path path : new Path[] {folder, target}) {
      Path real = Files.exists(path) ? path.toRealPath() : path.getParent().toRealPath().resolve(path.getFileName());
      if (real.startsWith(filesRoot)) {
        throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "DuckDB's spill folder " + path + " would lie under "
            + "the data root " + filesRoot + ", where SQL reads and writes; start the server with java.io.tmpdir "
            + "(-Djava.io.tmpdir=...) outside the data root");
      }
    }
  }

  /** The name DuckDB is given as its {@code temp_directory}. */
  Path directory() {
    return link;
  }

  /** Points {@link #directory()} at the decoy, for the moment DuckDB's access is locked. */
  void pointAtDecoy() {
    retarget(decoy);
  }

  /** Points {@link #directory()} at the real spill directory, once the lock is in place. */
  void pointAtSpill() {
    retarget(target);
  }

  private void retarget(Path to) {
    Path next = folder.resolve("spill.next");
    try {
      Files.deleteIfExists(next);
      Files.createSymbolicLink(next, to);
      // Atomic: the link never dangles, so a spill at any moment lands in a directory or fails.
      Files.move(next, link, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      throw ThallusException.of(StatusCode.INTERNAL, "cannot point DuckDB's spill link " + link + " at " + to + ": "
          + e, e);
    }
  }

  /** Removes the folder, with the spill files of an in-memory database (a database file's stay DuckDB's). */
  @Override
  public void close() {
    try (java.util.stream.Stream<Path> paths = Files.walk(folder)) {
      // Files.walk follows no link: the link goes, what it points at stays.
      paths.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
    } catch (IOException | java.io.UncheckedIOException e) {
      // Spill files of a closed DuckDB: nothing reads them again; a leftover is only disk space, and the next
      // start's sweep removes it.
    }
  }
}
