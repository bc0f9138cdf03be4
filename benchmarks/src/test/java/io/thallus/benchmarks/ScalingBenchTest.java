package io.thallus.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The scaling benchmark at tiny sizes (seconds): every section runs, every reader's and writer's data is checked
 * (a mismatch throws), and the report names the ceiling of every ratio.
 */
class ScalingBenchTest {
  @Test
  void tinyPlanMeasuresEverySectionAndNamesEveryCeiling(@TempDir Path out) throws Exception {
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    try (PrintStream print = new PrintStream(log, true, StandardCharsets.UTF_8)) {
      ScalingBench.run(ScalingPlan.tiny(), List.of("tcp", "shm"), "all", out, print);
    }
    String report = Files.readString(out.resolve("scaling.md"));
    assertThat(report).contains("### Read, end to end", "### Read, transport only", "### Ingest, end to end",
        "### Ingest, transport only");
    assertThat(report).contains("| tcp x plain DuckDB export |", "| tcp x engine export |", "| tcp x memcpy |",
        "| tcp x plain DuckDB ingest |", "| tcp x engine ingest |", "| tcp x reading the batches in-process |");
    List<String> rounds = Files.readAllLines(out.resolve("scaling.csv"));
    // Per section, every peer at K = 1 and 2: tcp, shm (where usable) and the ceilings.
    assertThat(rounds.stream().filter(line -> line.startsWith("\"Read, end to end\",\"tcp\",")).count())
        .isEqualTo(2);
    assertThat(rounds.stream().filter(line -> line.startsWith("\"Ingest, end to end\",\"plain DuckDB ingest\","))
        .count()).isEqualTo(2);
    assertThat(out.resolve("machine.txt")).content().contains("cores:").contains("duckdb:");
    assertThat(log.toString(StandardCharsets.UTF_8)).contains("scaling benchmark done");
  }
}
