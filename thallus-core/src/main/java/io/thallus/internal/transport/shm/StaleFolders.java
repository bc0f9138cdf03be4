package io.thallus.internal.transport.shm;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.attribute.BasicFileAttributeView;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Removes the folders of servers that died without cleaning up: the shm transport's segment folders
 * ({@code thallus-<pid>-<hex>}) and the DuckDB engine's spill folders ({@code thallus-duckdb-spill-<pid>-<hex>}),
 * whose pid no process has. Every user can create names in the shared base, as a link to anywhere or as a folder
 * of their own, and a pid above pid_max always looks dead. So a folder is removed only if it is a real folder, not
 * a link, owned by this process's user, and inside it each entry is unlinked where it stands: no link is followed
 * and no subfolder entered (a server only ever puts plain files and links there).
 */
public final class StaleFolders {
  private static final Logger LOG = LoggerFactory.getLogger(StaleFolders.class);
  private static final Path PROCESS_STATUS = Path.of("/proc/self/status");

  private StaleFolders() {}

  /** Removes this user's stale {@code <prefix><pid>-<suffix>} folders in {@code base}. */
  public static void sweep(Path base, String prefix) {
    sweep(base, prefix, name -> true);
  }

  /**
   * Removes {@code folder} if it is a stale folder of this user (named for a process that is gone), as the sweep
   * would; anything else, wherever a peer says it is, is left alone.
   */
  static void removeIfStale(Path folder, String prefix) {
    Path base = folder.toAbsolutePath().getParent();
    if (base != null && folder.getFileName() != null) {
      String name = folder.getFileName().toString();
      sweep(base, prefix, name::equals);
    }
  }

  private static void sweep(Path base, String prefix, java.util.function.Predicate<String> which) {
    OptionalInt ownUid = fileSystemUid();
    if (ownUid.isEmpty()) {
      LOG.debug("not sweeping stale folders in {}: this process's uid is unknown here", base);
      return;
    }
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(base)) {
      // Only a stream on the open folder can check an entry and then act on that same entry, not on whatever
      // took its name in between.
      if (!(entries instanceof SecureDirectoryStream<Path> secureBase)) {
        LOG.debug("not sweeping stale folders in {}: no race-free folder access on this platform", base);
        return;
      }
      List<Path> stale = new ArrayList<>();
      for (Path entry : entries) {
        String name = entry.getFileName().toString();
        if (which.test(name) && isStaleName(name, prefix)) {
          stale.add(entry);
        }
      }
      for (Path folder : stale) {
        removeIfOurs(secureBase, folder, ownUid.getAsInt());
      }
    } catch (IOException | RuntimeException e) {
      LOG.debug("could not sweep stale folders in {}: {}", base, e.toString());
    }
  }

  /** {@code <prefix><pid>-<suffix>} where no process has that pid. */
  static boolean isStaleName(String name, String prefix) {
    if (!name.startsWith(prefix)) {
      return false;
    }
    String[] parts = name.substring(prefix.length()).split("-");
    if (parts.length != 2 || parts[0].isEmpty() || parts[0].length() > 18
        || !parts[0].chars().allMatch(c -> c >= '0' && c <= '9')) {
      return false;
    }
    return ProcessHandle.of(Long.parseLong(parts[0])).isEmpty();
  }

  private static void removeIfOurs(SecureDirectoryStream<Path> base, Path folder, int ownUid) {
    Path name = folder.getFileName();
    try {
      Map<String, Object> seen = Files.readAttributes(folder, "unix:uid,isDirectory,fileKey",
          LinkOption.NOFOLLOW_LINKS);
      if (!Boolean.TRUE.equals(seen.get("isDirectory")) || !Integer.valueOf(ownUid).equals(seen.get("uid"))) {
        LOG.debug("left {} alone: not a folder of this process's user", folder);
        return;
      }
      try (SecureDirectoryStream<Path> contents = base.newDirectoryStream(name, LinkOption.NOFOLLOW_LINKS)) {
        Object opened = contents.getFileAttributeView(BasicFileAttributeView.class).readAttributes().fileKey();
        if (!opened.equals(seen.get("fileKey"))) {
          LOG.debug("left {} alone: it was replaced while being checked", folder);
          return;
        }
        List<Path> files = new ArrayList<>();
        for (Path entry : contents) {
          files.add(entry.getFileName());
        }
        for (Path file : files) {
          // Unlinks the entry itself (a link is removed, not its target) and refuses a subfolder.
          contents.deleteFile(file);
        }
      }
      base.deleteDirectory(name);
    } catch (IOException | RuntimeException e) {
      LOG.debug("could not remove stale folder {}: {}", folder, e.toString());
    }
  }

  /** The uid that owns the files this process creates (Linux's filesystem uid), if this system says. */
  static OptionalInt fileSystemUid() {
    try {
      Optional<String> line = Files.readAllLines(PROCESS_STATUS).stream()
          .filter(l -> l.startsWith("Uid:")).findFirst();
      // "Uid:  real  effective  saved  filesystem"
      String[] ids = line.orElse("").trim().split("\\s+");
      return ids.length == 5 ? OptionalInt.of(Integer.parseInt(ids[4])) : OptionalInt.empty();
    } catch (IOException | RuntimeException e) {
      return OptionalInt.empty();
    }
  }
}
