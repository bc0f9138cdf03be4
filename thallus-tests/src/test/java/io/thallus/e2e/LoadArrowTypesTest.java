package io.thallus.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.thallus.Location;
import io.thallus.ThallusClient;
import io.thallus.cli.ThallusCli;
import io.thallus.conformance.ArrowTypeCases;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import io.thallus.testing.ChildJvm;
import io.thallus.testing.JvmFlags;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code thallus load} of Arrow IPC streams of the types clients write and DuckDB scans (views, dictionaries, run-end
 * encoded, large types; {@link ArrowTypeCases}), each file loaded by the CLI as its own process: the table reads
 * back as DuckDB makes it from the same stream directly, and a type DuckDB refuses fails the load naming the column.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class LoadArrowTypesTest {
  @TempDir
  Path temp;

  private record Run(int exitCode, String err) {}

  private Run load(String... args) throws Exception {
    List<String> command = new ArrayList<>();
    command.add(ChildJvm.javaExecutable());
    command.addAll(JvmFlags.forChild());
    command.addAll(List.of("-Xmx512m", "-XX:-UsePerfData", "-XX:TieredStopAtLevel=1",
        "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", System.getProperty("java.class.path"),
        ThallusCli.class.getName(), "load"));
    command.addAll(List.of(args));
    Path err = Files.createTempFile(temp, "err", ".txt");
    Process process = new ProcessBuilder(command).redirectOutput(ProcessBuilder.Redirect.DISCARD)
        .redirectError(err.toFile()).start();
    if (!process.waitFor(2, TimeUnit.MINUTES)) {
      process.destroyForcibly();
      throw new AssertionError("thallus load " + String.join(" ", args) + " ran for 2 minutes: "
          + Files.readString(err));
    }
    return new Run(process.exitValue(), Files.readString(err));
  }

  @Test
  void everyArrowTypeDuckDBScansLoadsAsDuckDBImportsIt() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create())
             .build().start();
         ThallusClient client = ThallusClient.connect(allocator, server.getLocation())) {
      for (ArrowTypeCases.Case c : ArrowTypeCases.all()) {
        ArrowTypeCases.Expected expected = ArrowTypeCases.direct(c, 1);
        Path file = Files.write(temp.resolve(c.name() + ".arrows"), c.stream());
        String table = "loaded_" + c.name();
        Run run = load(server.getLocation().toString(), table, file.toString());
        if (expected.refused()) {
          assertThat(run.exitCode()).as(c.name() + ": " + run.err()).isEqualTo(2);
          assertThat(run.err()).as(c.name()).contains("column v (Arrow type ");
          continue;
        }
        assertThat(run.exitCode()).as(c.name() + ": " + run.err()).isZero();
        assertThat(run.err()).as(c.name()).contains("loaded 10 rows");
        assertThat(ArrowTypeCases.rows(client, table)).as(c.name()).isEqualTo(expected.rows());
      }
    }
  }
}
