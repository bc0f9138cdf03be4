package io.thallus.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.thallus.Location;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import io.thallus.testing.ChildJvm;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The JDBC driver as a tool loads it: its one-jar on the class path of a JVM started with no flags at all (no
 * --add-opens, no --sun-misc-unsafe-memory-access, no --enable-native-access), as sqlline, DBeaver or an
 * application server runs it. Loading it prints nothing; sqlline queries through it; the one transport that needs a
 * flag (ipc) says which.
 */
class PlainJvmIT {
  @TempDir
  Path data;

  private static String oneJar() {
    Path jar = Path.of(System.getProperty("thallus.jdbc.onejar", "missing"));
    assertThat(jar).as("the JDBC one-jar (built by the thallus-jdbc module)").exists();
    return jar.toString();
  }

  private static String sqllineJars() {
    return Stream.of(System.getProperty("java.class.path").split(File.pathSeparator))
        .filter(entry -> entry.contains("sqlline") || entry.contains("jline")).reduce((a, b) -> a + File.pathSeparator + b)
        .orElseThrow(() -> new AssertionError("no sqlline on the test class path"));
  }

  /** The jars of the frameworks FlaglessBatchMain drives, from this JVM's class path. */
  private static String frameworkJars() {
    List<String> names = List.of("spring-", "commons-logging", "jspecify", "jooq", "r2dbc", "reactive-streams",
        "jakarta.xml.bind", "mybatis", "micrometer");
    return Stream.of(System.getProperty("java.class.path").split(File.pathSeparator))
        .filter(entry -> names.stream().anyMatch(name -> Path.of(entry).getFileName().toString().startsWith(name)))
        .reduce((a, b) -> a + File.pathSeparator + b)
        .orElseThrow(() -> new AssertionError("no Spring, jOOQ or MyBatis on the test class path"));
  }

  private static String testClasses() throws Exception {
    return Path.of(FlaglessBatchMain.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
  }

  @Test
  void loadingTheDriverPrintsNothing() throws Exception {
    String classPath = oneJar() + File.pathSeparator + testClasses();
    try (ChildJvm load = ChildJvm.startWithoutFlags(classPath, LoadDriverMain.class.getName())) {
      List<String> output = load.awaitExit(60);
      assertThat(output.getFirst()).as(String.join("\n", output)).isEqualTo("0");
      assertThat(output.subList(1, output.size())).contains("driver io.thallus.jdbc.ThallusDriver")
          .allSatisfy(line -> assertThat(line).startsWith("driver "));
    }
  }

  @Test
  void sqllineQueriesThroughTheDriverInAJvmWithNoFlags() throws Exception {
    Path script = data.resolve("session.sql");
    Files.writeString(script, "SELECT count(*) AS n, sum(i) AS total, min('v' || i) AS first FROM range(200000) t(i);\n"
        + "!quit\n");
    Path ipcScript = data.resolve("ipc.sql");
    Files.writeString(ipcScript, "SELECT 1 AS one;\n!quit\n");
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0),
                 DuckDBEngine.builder().filesUnder(data).build()).dataRoot(data)
             .build().start()) {
      String classPath = oneJar() + File.pathSeparator + sqllineJars();
      String url = "jdbc:thallus://127.0.0.1:" + server.getLocation().port();
      for (String transport : List.of("tcp", "shm")) {
        try (ChildJvm sqlline = ChildJvm.startWithoutFlags(classPath, "sqlline.SqlLine", "-u",
            url + "?transport=" + transport, "-n", "alice", "-p", "secret", "--outputformat=csv", "--run=" + script)) {
          List<String> output = sqlline.awaitExit(120);
          String printed = String.join("\n", output);
          assertThat(output.getFirst()).as(printed).isEqualTo("0");
          // 200,000 rows in several batches, out of line: the batch bodies moved through the transport.
          assertThat(printed).as(transport).contains("'200000','19999900000','v0'");
          assertThat(printed).as("no native code touched").doesNotContain("restricted method");
        }
      }
      try (ChildJvm sqlline = ChildJvm.startWithoutFlags(classPath, "sqlline.SqlLine", "-u",
          url + "?transport=ipc", "-n", "alice", "-p", "secret", "--run=" + ipcScript)) {
        String printed = String.join("\n", sqlline.awaitExit(120));
        assertThat(printed).contains("the ipc transport needs this JVM started with "
            + "--add-opens=java.base/java.nio=ALL-UNNAMED");
      }
    }
  }

  /**
   * Issue 35: every batch a program sends (plain JDBC's prepared and Statement batches, Spring's batchUpdate, jOOQ's
   * batch, MyBatis's BATCH executor) works through the one-jar in a JVM with no flags, over tcp (bodies streamed
   * from Arrow memory) and shm, and leaves exactly the counts and rows DuckDB's own driver leaves.
   */
  @Test
  void batchesRunInAJvmWithNoFlagsAndLeaveWhatDuckDBLeaves() throws Exception {
    List<String> expected = new java.util.ArrayList<>();
    try (java.sql.Connection duckdb = java.sql.DriverManager.getConnection("jdbc:duckdb:")) {
      expected.addAll(BatchWorkload.plainJdbc(duckdb, "plain_items"));
      expected.addAll(BatchWorkload.dump(duckdb, "plain_items"));
      for (String table : List.of("spring_items", "jooq_items", "mybatis_items")) {
        expected.add(BatchWorkload.insertAll(duckdb, table));
        expected.addAll(BatchWorkload.dump(duckdb, table));
      }
    }
    assertThat(expected).hasSizeGreaterThan(3 * BatchWorkload.ROWS);
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0),
                 DuckDBEngine.builder().filesUnder(data).build()).dataRoot(data)
             .build().start()) {
      String classPath = oneJar() + File.pathSeparator + testClasses() + File.pathSeparator + frameworkJars();
      String url = "jdbc:thallus://127.0.0.1:" + server.getLocation().port();
      for (String transport : List.of("tcp", "shm")) {
        try (ChildJvm batches = ChildJvm.startWithoutFlags(classPath, FlaglessBatchMain.class.getName(),
            url + "?transport=" + transport)) {
          List<String> output = batches.awaitExit(300);
          String printed = String.join("\n", output);
          assertThat(output.getFirst()).as(printed).isEqualTo("0");
          List<String> lines = output.stream().filter(line -> line.startsWith("counts ") || line.startsWith("row "))
              .toList();
          for (int i = 0; i < Math.min(lines.size(), expected.size()); i++) {
            assertThat(lines.get(i)).as(transport + ", line " + i).isEqualTo(expected.get(i));
          }
          assertThat(lines).as(transport).hasSameSizeAs(expected);
          assertThat(printed).as("no native code touched").doesNotContain("restricted method");
        }
      }
    }
  }
}
