package io.thallus.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.cli.ThallusCli;
import io.thallus.testing.ChildJvm;
import io.thallus.testing.ServeProcess;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The server's own files, as {@code thallus serve} leaves them: owner-only modes for the database, its WAL and
 * DuckDB's spill folder, kept outside the data root, and stale spill folders of killed servers swept at the next
 * start.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ServerFilesTest {
  private static final String SPILL_PREFIX = "thallus-duckdb-spill-";
  private static final int NOBODY = 65534;

  @Test
  void theDatabaseAndItsWalAreOwnerOnlyAfterACheckpointAndARestart(@TempDir Path work) throws Exception {
    Path root = Files.createDirectories(work.resolve("root"));
    Path database = work.resolve("modes.duckdb");
    Path wal = work.resolve("modes.duckdb.wal");
    try (ChildJvm serve = ServeProcess.start(root, database, 0)) {
      try (Connection connection = DriverManager.getConnection(ServeProcess.jdbcUrl(serve));
           Statement statement = connection.createStatement()) {
        statement.execute("CREATE TABLE t AS SELECT range AS i FROM range(100)");
        assertThat(mode(database)).isEqualTo("rw-------");
        assertThat(mode(wal)).isEqualTo("rw-------");
        statement.execute("CHECKPOINT");
        statement.execute("INSERT INTO t SELECT range FROM range(10)");
        // DuckDB created the WAL again after the checkpoint.
        assertThat(mode(wal)).isEqualTo("rw-------");
      }
      serve.kill();
    }
    try (ChildJvm serve = ServeProcess.start(root, database, 0)) {
      try (Connection connection = DriverManager.getConnection(ServeProcess.jdbcUrl(serve));
           Statement statement = connection.createStatement()) {
        statement.execute("INSERT INTO t SELECT range FROM range(10)");
        assertThat(mode(database)).isEqualTo("rw-------");
        assertThat(mode(wal)).isEqualTo("rw-------");
      }
    }
  }

  @Test
  void aReadOnlyServersSqlReachesNeitherItsDatabaseNorItsWalByAnyName(@TempDir Path work) throws Exception {
    Path root = Files.createDirectories(work.resolve("root"));
    Path database = work.resolve("kept.duckdb");
    try (ChildJvm serve = ServeProcess.start(root, database, 0)) {
      try (Connection connection = DriverManager.getConnection(ServeProcess.jdbcUrl(serve));
           Statement statement = connection.createStatement()) {
        statement.execute("CREATE TABLE kept AS SELECT range AS id FROM range(500)");
      }
      // Killed: the committed rows are in the WAL, not yet in the file.
      serve.kill();
    }
    assertThat(work.resolve("kept.duckdb.wal")).exists();
    Files.createSymbolicLink(root.resolve("db-link"), database);
    Files.createSymbolicLink(root.resolve("wal-link"), work.resolve("kept.duckdb.wal"));
    try (ChildJvm serve = ServeProcess.start(root, database, 0, "--read-only")) {
      try (Connection connection = DriverManager.getConnection(ServeProcess.jdbcUrl(serve));
           Statement statement = connection.createStatement()) {
        try (var count = statement.executeQuery("SELECT count(*) FROM kept")) {
          count.next();
          assertThat(count.getLong(1)).isEqualTo(500);
        }
        // The server's working directory is the data root: "../kept.duckdb" is the database by a relative name.
        for (String name : List.of(database.toString(), "../kept.duckdb", "./../kept.duckdb", ".././kept.duckdb",
            root + "/../kept.duckdb", work + "//kept.duckdb", "db-link", "./db-link")) {
          for (String wal : List.of("", ".wal", ".wal.checkpoint", ".wal.recovery")) {
            String path = name.endsWith("db-link") ? (wal.isEmpty() ? name : name.replace("db-link", "wal-link"))
                : name + wal;
            assertRefused(statement, "SELECT * FROM read_blob('" + path + "')");
            assertRefused(statement, "SELECT * FROM read_text('" + path + "')");
            assertRefused(statement, "COPY (SELECT 1) TO '" + path + "' (USE_TMP_FILE false)");
            assertRefused(statement, "COPY (SELECT 1) TO '" + path + "'");
          }
          assertRefused(statement, "SELECT * FROM read_csv('" + name + "')");
          assertRefused(statement, "SELECT * FROM read_parquet('" + name + "')");
          if (!name.endsWith("db-link")) {
            // (The links themselves are entries of the data root, which a glob there lists.)
            assertNothingListed(statement, "SELECT * FROM glob('" + name + "*')");
          }
          assertRefused(statement, "ATTACH '" + name + "' AS again (READ_ONLY)");
        }
      }
      // The private names DuckDB opened the database by are gone.
      try (Stream<Path> left = Files.list(work)) {
        assertThat(left.map(p -> p.getFileName().toString())).noneMatch(n -> n.contains(".thallus-"));
      }
    }
    try (ChildJvm serve = ServeProcess.start(root, database, 0)) {
      try (Connection connection = DriverManager.getConnection(ServeProcess.jdbcUrl(serve));
           Statement statement = connection.createStatement();
           var count = statement.executeQuery("SELECT count(*), sum(id) FROM kept")) {
        count.next();
        assertThat(count.getLong(1)).isEqualTo(500);
        assertThat(count.getLong(2)).isEqualTo(499 * 500 / 2);
      }
    }
  }

  /** Refused, or no file: a glob outside the allowed names answers nothing rather than fail. */
  private static void assertNothingListed(Statement statement, String sql) throws SQLException {
    try (var listed = statement.executeQuery(sql)) {
      assertThat(listed.next()).as(sql).isFalse();
    } catch (SQLException e) {
      assertThat(e.getMessage()).as(sql).contains("Permission Error");
    }
  }

  private static void assertRefused(Statement statement, String sql) {
    assertThatThrownBy(() -> statement.execute(sql)).as(sql).isInstanceOf(SQLException.class)
        .hasMessageContaining("Permission Error");
  }

  @Test
  void anInMemoryServerSpillsIntoAnOwnerOnlyFolderOutsideTheDataRoot(@TempDir Path work) throws Exception {
    Path root = Files.createDirectories(work.resolve("root"));
    Path tmp = Files.createDirectories(work.resolve("tmp"));
    try (ChildJvm serve = serveInMemory(root, tmp, "--memory-limit", "64MB", "--threads", "1")) {
      String url = ServeProcess.jdbcUrl(serve);
      Path folder = spillFolderOf(tmp, serve.pid());
      assertThat(mode(folder)).isEqualTo("rwx------");
      try (Connection connection = DriverManager.getConnection(url);
           Statement statement = connection.createStatement()) {
        // A temp table four times the memory limit: DuckDB evicts its blocks to spill files, kept while it lives.
        statement.execute("CREATE TEMP TABLE big AS SELECT range AS i, md5(range::VARCHAR) AS h FROM range(3000000)");
        List<Path> files = list(folder);
        assertThat(files).as("spill files").isNotEmpty();
        for (Path file : files) {
          assertThat(mode(file)).as(file.toString()).isEqualTo("rw-------");
        }
      }
    }
    // A temporary folder under the data root would put the spill files where every client's SQL reads.
    try (ChildJvm serve = serveInMemory(root, Files.createDirectories(root.resolve("tmp")))) {
      assertThat(String.join("\n", serve.awaitExit(60)))
          .contains("INVALID_ARGUMENT: DuckDB's spill folder " + root.toRealPath().resolve("tmp"))
          .contains("would lie under the data root");
    }
  }

  @Test
  void aStartRemovesTheSpillFoldersOfKilledServersOnly(@TempDir Path work) throws Exception {
    Path root = Files.createDirectories(work.resolve("root"));
    Path tmp = Files.createDirectories(work.resolve("tmp"));
    Path killedFolder;
    try (ChildJvm killed = serveInMemory(root, tmp)) {
      ServeProcess.jdbcUrl(killed);
      killedFolder = spillFolderOf(tmp, killed.pid());
      Files.writeString(killedFolder.resolve("duckdb_temp_storage_S32K-0.tmp"), "a killed server's spill file");
      killed.kill();
    }
    assertThat(killedFolder).isDirectory();
    // A folder named for a live process (this one), and a link named for a dead one, stay.
    Path live = Files.createDirectory(tmp.resolve(SPILL_PREFIX + ProcessHandle.current().pid() + "-0011223344556677"));
    Path elsewhere = Files.createDirectories(work.resolve("elsewhere"));
    Path kept = Files.writeString(elsewhere.resolve("kept"), "not the sweep's to delete");
    Path link = Files.createSymbolicLink(tmp.resolve(SPILL_PREFIX + "999999999-8899aabbccddeeff"), elsewhere);
    boolean root0 = ((Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid")) == 0;
    Path foreign = Files.createDirectory(tmp.resolve(SPILL_PREFIX + "999999998-8899aabbccddeeff"));
    if (root0) {
      // Another user's stale-looking folder (as root, this test can give one away).
      Files.setAttribute(foreign, "unix:uid", NOBODY);
    }
    try (ChildJvm next = serveInMemory(root, tmp)) {
      ServeProcess.jdbcUrl(next);
      assertThat(killedFolder).doesNotExist();
      assertThat(live).isDirectory();
      assertThat(link).isSymbolicLink();
      assertThat(kept).hasContent("not the sweep's to delete");
      if (root0) {
        assertThat(foreign).isDirectory();
      } else {
        assertThat(foreign).doesNotExist();
      }
    }
  }

  /** {@code thallus serve} with an in-memory database, its {@code java.io.tmpdir} at {@code tmp}. */
  private static ChildJvm serveInMemory(Path root, Path tmp, String... extra) throws Exception {
    List<String> args = new ArrayList<>(List.of("serve", "--data-root", root.toString(), "--port", "0",
        "--transports", "tcp"));
    args.addAll(List.of(extra));
    return ChildJvm.start(List.of("env", "JAVA_TOOL_OPTIONS=-Djava.io.tmpdir=" + tmp),
        System.getProperty("java.class.path"), ThallusCli.class, args.toArray(String[]::new));
  }

  private static List<Path> list(Path folder) throws Exception {
    try (Stream<Path> entries = Files.list(folder)) {
      return entries.toList();
    }
  }

  private static Path spillFolderOf(Path tmp, long pid) throws Exception {
    List<Path> found = list(tmp).stream()
        .filter(p -> p.getFileName().toString().startsWith(SPILL_PREFIX + pid + "-")).toList();
    assertThat(found).as("spill folders of process " + pid).hasSize(1);
    return found.getFirst();
  }

  private static String mode(Path path) throws Exception {
    return PosixFilePermissions.toString(Files.getPosixFilePermissions(path, LinkOption.NOFOLLOW_LINKS));
  }
}
