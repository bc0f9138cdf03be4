package io.thallus.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;

/** The machine and versions a run came from, so its numbers can be read next to others. */
final class Machine {
  private Machine() {}

  static String describe(String duckdbVersion) {
    StringBuilder text = new StringBuilder(engineSide(duckdbVersion));
    line(text, "arrow flight", version("org.apache.arrow", "flight-core"));
    line(text, "flight sql", version("org.apache.arrow", "flight-sql") + " (server protocol and JDBC driver)");
    line(text, "grpc", io.grpc.internal.GrpcUtil.IMPLEMENTATION_VERSION);
    line(text, "netty", io.netty.util.Version.identify().values().stream().map(v -> v.artifactVersion())
        .distinct().sorted().reduce((a, b) -> a + ", " + b).orElse("?"));
    line(text, "jmh", version("org.openjdk.jmh", "jmh-core"));
    line(text, "xchart", version("org.knowm.xchart", "xchart"));
    return text.toString();
  }

  /**
   * The machine, the JVM, Arrow and DuckDB: what a run needs that loads no Flight, gRPC or Netty class (the scaling
   * benchmark runs from a class path without them).
   */
  static String engineSide(String duckdbVersion) {
    StringBuilder text = new StringBuilder();
    line(text, "date", Instant.now().toString());
    line(text, "commit", System.getProperty("thallus.commit", "(not given)"));
    line(text, "cpu", cpuModel());
    line(text, "cores", Integer.toString(Runtime.getRuntime().availableProcessors()));
    line(text, "memory", memory());
    line(text, "os", System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
        + System.getProperty("os.arch"));
    line(text, "jdk", System.getProperty("java.vm.vendor") + " " + Runtime.version() + " ("
        + System.getProperty("java.vm.name") + ")");
    line(text, "jvm flags", String.join(" ", java.lang.management.ManagementFactory.getRuntimeMXBean()
        .getInputArguments()));
    line(text, "arrow", version("org.apache.arrow", "arrow-vector"));
    line(text, "duckdb", duckdbVersion + " (embedded through its JDBC driver)");
    return text.toString();
  }

  private static void line(StringBuilder text, String key, String value) {
    text.append(String.format("%-13s %s%n", key + ":", value));
  }

  /** A dependency's version from the pom.properties Maven puts in every jar (and shading keeps). */
  static String version(String group, String artifact) {
    String resource = "/META-INF/maven/" + group + "/" + artifact + "/pom.properties";
    try (var in = Machine.class.getResourceAsStream(resource)) {
      if (in == null) {
        return "?";
      }
      java.util.Properties properties = new java.util.Properties();
      properties.load(in);
      return properties.getProperty("version", "?");
    } catch (IOException e) {
      return "?";
    }
  }

  private static String cpuModel() {
    return read("/proc/cpuinfo").stream().filter(l -> l.startsWith("model name")).findFirst()
        .map(l -> l.substring(l.indexOf(':') + 1).trim()).orElse("?");
  }

  private static String memory() {
    return read("/proc/meminfo").stream().filter(l -> l.startsWith("MemTotal")).findFirst()
        .map(l -> String.format("%.1f GiB", Long.parseLong(l.replaceAll("\\D", "")) / 1024.0 / 1024.0)).orElse("?");
  }

  private static List<String> read(String file) {
    try {
      return Files.readAllLines(Path.of(file));
    } catch (IOException | RuntimeException e) {
      return List.of();
    }
  }
}
