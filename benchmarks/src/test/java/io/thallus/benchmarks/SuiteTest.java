package io.thallus.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The suite at tiny sizes (seconds): every peer in every point, their data checked, every output written. */
class SuiteTest {
  @Test
  void tinyRunWritesResultsWithEveryPeerAndMatchingChecksums(@TempDir Path out) throws Exception {
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    boolean ok;
    try (PrintStream print = new PrintStream(log, true, StandardCharsets.UTF_8)) {
      // Suite.run closes its fixture, whose RootAllocator fails on any leaked buffer.
      ok = Suite.run(Plan.tiny(), out, print);
    }
    assertThat(ok).as(log.toString(StandardCharsets.UTF_8)).isTrue();

    JsonNode results = new ObjectMapper().readTree(out.resolve("results.json").toFile());
    List<String> transports = new ArrayList<>();
    results.get("transports").forEach(t -> transports.add(t.asText()));
    assertThat(transports).contains("ipc", "tcp");
    assertThat(results.get("allChecksumsMatch").asBoolean()).isTrue();
    assertThat(results.get("points")).hasSizeGreaterThan(10);
    for (JsonNode point : results.get("points")) {
      List<String> peers = new ArrayList<>();
      point.get("peers").forEach(peer -> {
        peers.add(peer.get("name").asText());
        if (!peer.get("checksumMatches").isNull()) {
          assertThat(peer.get("checksumMatches").asBoolean()).as(peer.get("name") + " at " + point).isTrue();
        }
        assertThat(peer.get("medianSeconds").asDouble()).isPositive();
      });
      assertThat(peers).containsAll(transports).contains(Fixture.FLIGHT);
      String ceiling = point.get("setting").asText().equals("transport only") ? "raw socket" : Fixture.DUCKDB;
      assertThat(peers).contains(ceiling);
    }
    List<String> drivers = new ArrayList<>();
    results.get("jdbc").forEach(driver -> {
      drivers.add(driver.get("name").asText());
      assertThat(driver.get("valuesMatch").asBoolean()).as(driver.toString()).isTrue();
    });
    assertThat(drivers).contains("thallus tcp", JdbcBench.FLIGHT_SQL, JdbcBench.DUCKDB);
    assertThat(out.resolve("summary.md")).content().contains("Arrow Flight Java DoGet").contains("targets");
    assertThat(out.resolve("machine.txt")).content().contains("cores:").contains("duckdb:");
    assertThat(out.resolve("transport-only-time-vs-rows.png")).isNotEmptyFile();
    assertThat(out.resolve("headline-throughput.png")).isNotEmptyFile();
    try (var files = Files.list(out)) {
      assertThat(files.filter(f -> f.toString().endsWith(".png")).count()).isEqualTo(9);
    }
  }
}
