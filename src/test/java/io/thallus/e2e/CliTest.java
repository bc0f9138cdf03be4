package io.thallus.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.thallus.Location;
import io.thallus.ThallusServer;
import io.thallus.cli.ThallusCli;
import io.thallus.conformance.Collected;
import io.thallus.conformance.DuckDBReference;
import io.thallus.conformance.TypeTable;
import io.thallus.conformance.Values;
import io.thallus.rdma.testing.JvmFlags;
import io.thallus.testing.ChildJvm;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The CLI as a person runs it, against a real server. */
class CliTest {
  @TempDir
  Path temp;

  private record Run(int exitCode, String out, String err) {}

  /** Runs {@code thallus ARGS} as its own process (this JVM's class path and flags), as a person would. */
  private Run cli(String... args) {
    List<String> command = new ArrayList<>();
    command.add(ChildJvm.javaExecutable());
    command.addAll(JvmFlags.forChild());
    command.add("-Xmx1g");
    command.add("-XX:-UsePerfData");
    command.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn");
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(ThallusCli.class.getName());
    command.addAll(List.of(args));
    try {
      Path out = Files.createTempFile(temp, "out", ".txt");
      Path err = Files.createTempFile(temp, "err", ".txt");
      Process process = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
      if (!process.waitFor(5, TimeUnit.MINUTES)) {
        process.destroyForcibly();
        throw new AssertionError("thallus " + String.join(" ", args) + " ran for 5 minutes: " + Files.readString(err));
      }
      return new Run(process.exitValue(), Files.readString(out), Files.readString(err));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  @Test
  void queryWritesArrowAndParquetFilesThatHoldTheResult() throws Exception {
    String sql = TypeTable.sql(2000);
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0)).build().start()) {
      Path arrow = temp.resolve("result.arrow");
      Run toArrow = cli("query", server.getLocation().toString(), sql, "--out", arrow.toString(), "--batch-rows", "512");
      assertThat(toArrow.exitCode()).as(toArrow.err()).isZero();
      assertThat(toArrow.err()).contains("2,000 rows");

      Collected expected = DuckDBReference.run(sql, 512);
      List<List<Object>> rows = new ArrayList<>();
      try (BufferAllocator readMemory = new RootAllocator();
           FileChannel channel = FileChannel.open(arrow);
           ArrowFileReader reader = new ArrowFileReader(channel, readMemory)) {
        while (reader.loadNextBatch()) {
          Values.appendRows(reader.getVectorSchemaRoot(), reader, rows);
        }
        assertThat(reader.getVectorSchemaRoot().getSchema()).isEqualTo(expected.schema());
      }
      assertThat(rows).isEqualTo(expected.rows());

      String simple = "SELECT i AS id, 'n' || i AS name, i / 4 AS quarter FROM range(5000) t(i)";
      Path parquet = temp.resolve("result.parquet");
      Run toParquet = cli("query", server.getLocation().withTransport("ipc").toString(), simple, "--out",
          parquet.toString());
      assertThat(toParquet.exitCode()).as(toParquet.err()).isZero();
      assertThat(DuckDBReference.run("SELECT * FROM read_parquet('" + parquet + "') ORDER BY id", 1024).rows())
          .isEqualTo(DuckDBReference.run(simple + " ORDER BY id", 1024).rows());
    }
  }

  @Test
  void queryPrintsATableAndReportsErrorsWithAnExitCode() {
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0)).build().start()) {
      Run printed = cli("query", server.getLocation().toString(), "SELECT 7 AS seven, 'x' AS letter", "--show", "5");
      assertThat(printed.exitCode()).isZero();
      assertThat(printed.out()).contains("seven | letter").contains("7 | x");

      Run bad = cli("query", server.getLocation().toString(), "SELEC 1");
      assertThat(bad.exitCode()).isEqualTo(2);
      assertThat(bad.err()).contains("thallus: INVALID_ARGUMENT").contains("syntax error");
    }
  }

  @Test
  void demoComparesTransportsAndChecksTheData() {
    Run demo = cli("demo", "--rows", "300000", "--runs", "1", "--batch-rows", "16384");
    assertThat(demo.exitCode()).as(demo.out() + demo.err()).isZero();
    assertThat(demo.out()).contains("ipc").contains("tcp").contains("raw socket (ceiling)")
        .contains("all checksums agree");
  }

  @Test
  void benchComparesBothSettingsWithTheirCeilings() {
    Run bench = cli("bench", "--rows", "200000", "--runs", "1", "--batch-rows", "16384");
    assertThat(bench.exitCode()).as(bench.out() + bench.err()).isZero();
    assertThat(bench.out()).contains("1. transport only").contains("2. end to end").contains("raw socket (ceiling)")
        .contains("memcpy (ceiling)").contains("DuckDB export (ceiling)").contains("all checksums agree");
  }
}
