package io.thallus.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.thallus.Location;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * At start the shm transport removes the segment folders of servers that died (the pid in the name is gone).
 * Anyone can put a name like that in /dev/shm, and a pid above pid_max always looks dead: the sweep must remove
 * only real folders its own OS user made, and must not follow a link anywhere, neither to the folder nor inside it.
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class StaleSegmentSweepTest {
  private static final Path DEV_SHM = Path.of("/dev/shm");
  private static final int NOBODY = 65534;

  private final List<Path> created = new ArrayList<>();

  @Test
  void startingTheServerRemovesOnlyItsOwnUsersStaleFoldersAndFollowsNoLink() throws Exception {
    Assumptions.assumeTrue(Files.isDirectory(DEV_SHM) && Files.isWritable(DEV_SHM), "needs a writable /dev/shm");
    Assumptions.assumeTrue(((Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid")) == 0,
        "needs root, to give a folder to uid " + NOBODY);

    Path victim = track(Files.createTempDirectory("thallus-sweep-victim-"));
    Path victimFile = Files.writeString(victim.resolve("precious.txt"), "not the sweep's to delete");
    Path linkToVictim = track(Files.createSymbolicLink(DEV_SHM.resolve(staleName(9999999)), victim));

    Path foreign = track(Files.createDirectory(DEV_SHM.resolve(staleName(9999998))));
    Path foreignFile = Files.writeString(foreign.resolve("0.seg"), "another user's segment");
    Files.setAttribute(foreignFile, "unix:uid", NOBODY);
    Files.setAttribute(foreign, "unix:uid", NOBODY);

    Path outside = track(Files.createTempFile("thallus-sweep-outside-", ".txt"));
    Path ours = track(Files.createDirectory(DEV_SHM.resolve(staleName(9999997))));
    Files.writeString(ours.resolve("0.seg"), "a dead server's segment");
    Files.createSymbolicLink(ours.resolve("1.seg"), outside);

    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create())
             .transports(List.of("shm")).build().start()) {
      assertThat(server.transports()).containsExactly("shm");
    }

    SoftAssertions.assertSoftly(softly -> {
      softly.assertThat(victimFile).as("a file in the folder a stale-looking link points to").exists();
      softly.assertThat(foreignFile).as("a file in another user's stale-looking folder").exists();
      softly.assertThat(foreign).as("another user's stale-looking folder").isDirectory();
      softly.assertThat(ours).as("a stale folder of the server's own user").doesNotExist();
      softly.assertThat(outside).as("the file a link inside a stale folder points to").exists();
    });
  }

  @AfterEach
  void removeWhatTheTestCreated() throws IOException {
    for (Path path : created.reversed()) {
      if (Files.isSymbolicLink(path) || !Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)) {
        Files.deleteIfExists(path);
        continue;
      }
      try (Stream<Path> tree = Files.walk(path)) {
        for (Path each : tree.sorted(Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(each);
        }
      }
    }
  }

  private Path track(Path path) {
    created.add(path);
    return path;
  }

  /** A segment folder name of a server with this pid, which no live process has (it is above pid_max). */
  private static String staleName(long pid) {
    byte[] suffix = new byte[8];
    new SecureRandom().nextBytes(suffix);
    return "thallus-" + pid + "-" + HexFormat.of().formatHex(suffix);
  }
}
