package io.thallus.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.thallus.Location;
import io.thallus.ThallusClient;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import io.thallus.ThallusStream;
import io.thallus.e2e.SameHostTest;
import io.thallus.testing.ChildJvm;
import io.thallus.testing.SameHostProbeMain;
import java.io.File;
import java.io.IOException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The boundary the same-host transports rely on is the OS user. A process of another user (here uid 65534, started
 * with {@code setpriv}) tries what the shm and cma transports let a client do without asking the server: read a
 * shared-memory segment and read the server's memory with {@code process_vm_readv}. Both must be refused, and its
 * client must still get its result, over tcp. The same probe run as the server's own user reads both, so the
 * refusals are the boundary's doing and not the probe's.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class OtherUserTest {
  private static final int NOBODY = 65534;
  private static final String SQL = "SELECT i * 3 - 7 AS v FROM range(300000) t(i)";

  @Test
  void anotherUsersProcessReadsNeitherSegmentsNorServerMemoryAndItsClientFallsBackToTcp() throws Exception {
    assumeAnotherUserCanBeStarted();
    long[] expected = expectedRowsAndSum();
    Path shared = Files.createTempDirectory(Path.of("/tmp"), "thallus-other-user-");
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create())
             .build().start();
         ThallusClient owner = ThallusClient.connect(allocator, server.getLocation());
         ThallusStream stream = owner.query(SQL);
         ArrowBuf secret = allocator.buffer(32)) {
      assertThat(owner.transport()).isEqualTo("shm");
      stream.next().close();
      Path segment = firstSegment();
      byte[] secretBytes = new byte[32];
      new SecureRandom().nextBytes(secretBytes);
      secret.setBytes(0, secretBytes);
      String classPath = shareClassPath(shared);
      String[] args = {server.getLocation().toString(), segment.toString(),
          Long.toString(ProcessHandle.current().pid()), Long.toString(secret.memoryAddress()), "32", SQL};

      List<String> asNobody = run(List.of("setpriv", "--reuid=" + NOBODY, "--regid=" + NOBODY, "--clear-groups",
          "--"), classPath, args);
      assertThat(asNobody).as("printed by the probe run as uid %d", NOBODY).containsExactly("0",
          "SEGMENT refused AccessDeniedException",
          "MEMORY refused errno 1", // EPERM: no ptrace rights over another user's process
          "RESULT tcp " + expected[0] + " " + expected[1],
          "DONE");

      List<String> asOwner = run(List.of(), classPath, args);
      assertThat(asOwner).as("printed by the probe run as the server's user").containsExactly("0",
          "SEGMENT read " + Files.size(segment) + " bytes",
          "MEMORY read " + HexFormat.of().formatHex(secretBytes),
          "RESULT shm " + expected[0] + " " + expected[1],
          "DONE");
    } finally {
      deleteTree(shared);
    }
  }

  private static List<String> run(List<String> launcher, String classPath, String[] args) throws Exception {
    try (ChildJvm child = ChildJvm.start(launcher, classPath, SameHostProbeMain.class, args)) {
      return child.awaitExit(120).stream().filter(line -> !line.startsWith("WARNING")).toList();
    }
  }

  private static void assumeAnotherUserCanBeStarted() throws IOException {
    Assumptions.assumeTrue(((Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid")) == 0,
        "only root can start a process as another user here");
    Assumptions.assumeTrue(Stream.of(System.getenv("PATH").split(File.pathSeparator))
        .anyMatch(dir -> Files.isExecutable(Path.of(dir, "setpriv"))), "setpriv (util-linux) is not installed");
    for (Path p = Path.of(ChildJvm.javaExecutable()).toRealPath(); p != null; p = p.getParent()) {
      Assumptions.assumeTrue(Files.getPosixFilePermissions(p).contains(PosixFilePermission.OTHERS_EXECUTE),
          "the JDK at " + p + " cannot be run by other users");
    }
  }

  private static long[] expectedRowsAndSum() throws Exception {
    try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
         ResultSet result = duckdb.createStatement().executeQuery(
             "SELECT count(*), sum(v)::BIGINT FROM (" + SQL + ")")) {
      result.next();
      return new long[] {result.getLong(1), result.getLong(2)};
    }
  }

  private static Path firstSegment() throws IOException {
    List<Path> folders = SameHostTest.segmentFolders(ProcessHandle.current().pid());
    assertThat(folders).hasSize(1);
    try (Stream<Path> files = Files.list(folders.getFirst())) {
      return files.findFirst().orElseThrow(() -> new AssertionError("no segment in " + folders.getFirst()));
    }
  }

  /**
   * The test class path, made readable by every user under {@code shared}: Maven's repository lives in a home
   * folder other users cannot enter. Jars are hard-linked where they are readable by all (no copy), else copied.
   */
  private static String shareClassPath(Path shared) throws IOException {
    Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxr-xr-x"));
    List<String> entries = new ArrayList<>();
    int index = 0;
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      Path source = Path.of(entry);
      if (!Files.exists(source)) {
        continue;
      }
      Path target = shared.resolve(index++ + "-" + source.getFileName());
      if (Files.isDirectory(source)) {
        try (Stream<Path> tree = Files.walk(source)) {
          for (Path from : (Iterable<Path>) tree::iterator) {
            Path to = target.resolve(source.relativize(from).toString());
            if (Files.isDirectory(from)) {
              Files.createDirectories(to);
              Files.setPosixFilePermissions(to, PosixFilePermissions.fromString("rwxr-xr-x"));
            } else {
              Files.copy(from, to);
              Files.setPosixFilePermissions(to, PosixFilePermissions.fromString("rw-r--r--"));
            }
          }
        }
      } else {
        boolean linked = false;
        if (Files.getPosixFilePermissions(source).contains(PosixFilePermission.OTHERS_READ)) {
          try {
            Files.createLink(target, source);
            linked = true;
          } catch (FileSystemException | UnsupportedOperationException e) {
            // Another file system: copy instead.
          }
        }
        if (!linked) {
          Files.copy(source, target);
          Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rw-r--r--"));
        }
      }
      entries.add(target.toString());
    }
    return String.join(File.pathSeparator, entries);
  }

  private static void deleteTree(Path root) throws IOException {
    try (Stream<Path> tree = Files.walk(root)) {
      for (Path p : (Iterable<Path>) tree.sorted(Comparator.reverseOrder())::iterator) {
        Files.delete(p);
      }
    }
  }
}
