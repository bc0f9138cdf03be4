package io.thallus.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Test;

/**
 * The JDBC one-jar as tools load it (after package): a client, so it carries no DuckDB (its native library was most
 * of the jar's 90 MB while the driver came with thallus-core's engine), and it stays small. The build's banned
 * dependency keeps org.duckdb out of the client modules' trees; this checks what actually got packed.
 */
class OneJarIT {
  /** The most the one-jar may weigh: 12 MiB (without DuckDB it is about 8). */
  private static final long MAX_BYTES = 12L << 20;

  private static Path oneJar() {
    Path jar = Path.of(System.getProperty("thallus.jdbc.onejar"));
    assertThat(jar).exists();
    return jar;
  }

  private static List<String> entries() throws IOException {
    try (ZipFile zip = new ZipFile(oneJar().toFile())) {
      return zip.stream().map(ZipEntry::getName).toList();
    }
  }

  @Test
  void holdsTheDriverAndNoDuckDB() throws IOException {
    List<String> entries = entries();
    assertThat(entries).contains("io/thallus/jdbc/ThallusDriver.class", "META-INF/services/java.sql.Driver",
        "io/thallus/ThallusClient.class");
    assertThat(entries).noneMatch(name -> name.startsWith("org/duckdb/"));
    assertThat(entries).noneMatch(name -> name.toLowerCase(java.util.Locale.ROOT).contains("libduckdb"));
    // Nor the server or the engine SPI: a client never runs them.
    assertThat(entries).noneMatch(name -> name.startsWith("io/thallus/server/") || name.startsWith("io/thallus/engine/")
        || name.startsWith("io/thallus/duckdb/") || name.startsWith("io/thallus/internal/server/"));
  }

  @Test
  void weighsAtMostTwelveMegabytes() throws IOException {
    assertThat(Files.size(oneJar())).isLessThanOrEqualTo(MAX_BYTES);
  }
}
