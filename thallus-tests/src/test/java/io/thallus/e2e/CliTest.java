package io.thallus.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.Location;
import io.thallus.QueryRequest;
import io.thallus.ThallusClient;
import io.thallus.ThallusException;
import io.thallus.ThallusStream;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.server.ThallusServer;
import io.thallus.cli.ThallusCli;
import io.thallus.conformance.Collected;
import io.thallus.conformance.DuckDBReference;
import io.thallus.conformance.TypeTable;
import io.thallus.conformance.Values;
import io.thallus.testing.JvmFlags;
import io.thallus.testing.ChildJvm;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
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
         ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create())
             .build().start()) {
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
  void loadPutsParquetCsvAndArrowFilesIntoTablesWithTheirValues() throws Exception {
    String sql = "SELECT i AS id, 'name ' || i AS name, i * 0.5 AS score, DATE '2024-01-01' + (i % 400)::INTEGER "
        + "AS day, CASE WHEN i % 9 = 0 THEN NULL ELSE i % 7 = 0 END AS flag FROM range(300000) t(i)";
    Path parquet = temp.resolve("in.parquet");
    Path csv = temp.resolve("in.csv");
    try (java.sql.Connection duckdb = java.sql.DriverManager.getConnection("jdbc:duckdb:");
         java.sql.Statement statement = duckdb.createStatement()) {
      statement.execute("COPY (" + sql + ") TO '" + parquet + "' (FORMAT parquet)");
      statement.execute("COPY (" + sql + ") TO '" + csv + "' (FORMAT csv, HEADER)");
    }
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create())
             .build().start()) {
      String url = server.getLocation().toString();
      Run fromParquet = cli("load", url, "from_parquet", parquet.toString());
      assertThat(fromParquet.exitCode()).as(fromParquet.err()).isZero();
      assertThat(fromParquet.err()).containsPattern("loaded 300,000 rows \\(0\\.\\d+ GB of Arrow buffers\\) into "
          + "from_parquet in [0-9.]+ s: [0-9,]+ rows/s, [0-9.]+ GB/s over (shm|cma|tcp)");
      Run fromCsv = cli("load", url, "from_csv", csv.toString());
      assertThat(fromCsv.exitCode()).as(fromCsv.err()).isZero();
      Path arrow = temp.resolve("in.arrow");
      Run toArrow = cli("query", url, "SELECT * FROM from_parquet ORDER BY id", "--out", arrow.toString());
      assertThat(toArrow.exitCode()).as(toArrow.err()).isZero();
      Run fromArrow = cli("load", url, "from_arrow", arrow.toString(), "--mode", "create");
      assertThat(fromArrow.exitCode()).as(fromArrow.err()).isZero();
      Run again = cli("load", url, "from_arrow", arrow.toString(), "--mode", "append");
      assertThat(again.exitCode()).as(again.err()).isZero();

      Collected expected = DuckDBReference.run(sql + " ORDER BY id", 4096);
      try (ThallusClient client = ThallusClient.connect(allocator, server.getLocation())) {
        try (ThallusStream stream = client.query(QueryRequest.builder("SELECT * FROM from_parquet ORDER BY id")
            .batchRows(4096).build())) {
          assertThat(Collected.fromIterator(stream).rows()).isEqualTo(expected.rows());
        }
        // A CSV file's types are what DuckDB detects in it: the same as DuckDB reading the file directly.
        try (ThallusStream stream = client.query(QueryRequest.builder("SELECT * FROM from_csv ORDER BY id")
            .batchRows(4096).build())) {
          Collected loaded = Collected.fromIterator(stream);
          Collected direct = DuckDBReference.run("SELECT * FROM read_csv('" + csv + "') ORDER BY id", 4096);
          assertThat(loaded.schema()).isEqualTo(direct.schema());
          assertThat(loaded.rows()).isEqualTo(direct.rows());
        }
        try (ThallusStream stream = client.query("SELECT count(*) AS n, count(DISTINCT id) AS ids FROM from_arrow")) {
          assertThat(Collected.fromIterator(stream).rows()).containsExactly(List.of(600000L, 300000L));
        }
      }
      Run exists = cli("load", url, "from_csv", csv.toString());
      assertThat(exists.exitCode()).isEqualTo(2);
      assertThat(exists.err()).contains("thallus: ALREADY_EXISTS").contains("table from_csv exists already");
      Run missing = cli("load", url, "t", temp.resolve("nothing.parquet").toString());
      assertThat(missing.exitCode()).isEqualTo(2);
      assertThat(missing.err()).contains("no file");
    }
  }

  @Test
  void queryPrintsATableAndReportsErrorsWithAnExitCode() {
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create())
             .build().start()) {
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

  @Test
  void serveExposesMetricsThatMoveWithAQueryAndAHealthCheck() throws Exception {
    try (ChildJvm serve = ChildJvm.start(ThallusCli.class, "serve", "--data-root", temp.toString(), "--port", "0",
        "--metrics-port", "0", "--metrics-timeout-ms", "5000", "--metrics-max-connections", "8",
        "--transports", "tcp");
         BufferAllocator allocator = new RootAllocator()) {
      String serving = serve.awaitLine("thallus serving", 60);
      Location location = Location.parse(serving.substring(serving.indexOf("thallus://"), serving.indexOf(" over ")));
      String metricsLine = serve.awaitLine("metrics at ", 10);
      URI metrics = URI.create(metricsLine.substring("metrics at ".length()).trim());
      HttpClient http = HttpClient.newHttpClient();

      String before = scrape(http, metrics);
      assertThat(sample(before, "thallus_queries_total{outcome=\"ok\"}")).isZero();

      try (ThallusClient client = ThallusClient.connect(allocator, location);
           ThallusStream stream = client.query(QueryRequest.builder("SELECT i FROM range(100000) t(i)").build())) {
        long rows = 0;
        while (stream.hasNext()) {
          try (var batch = stream.next()) {
            rows += batch.getRowCount();
          }
        }
        assertThat(rows).isEqualTo(100_000);
      }
      try (ThallusClient client = ThallusClient.connect(allocator, location)) {
        assertThatThrownBy(() -> client.query(QueryRequest.builder("SELEC 1").build()).hasNext())
            .isInstanceOf(ThallusException.class);
      }

      String after = awaitMetric(http, metrics, "thallus_queries_total{outcome=\"ok\"}", 1);
      assertThat(sample(after, "thallus_queries_total{outcome=\"invalid_argument\"}")).isEqualTo(1);
      // 100,000 BIGINT values: 800,000 bytes of Arrow buffers over tcp, in at least one batch.
      assertThat(sample(after, "thallus_sent_bytes_total{transport=\"tcp\"}")).isGreaterThanOrEqualTo(800_000);
      assertThat(sample(after, "thallus_batches_sent_total{transport=\"tcp\"}")).isGreaterThanOrEqualTo(1);
      assertThat(sample(after, "thallus_query_duration_seconds_count")).isEqualTo(2);
      assertThat(after).contains("thallus_query_duration_seconds_bucket", "thallus_batch_memory_budget_bytes",
          "thallus_batch_memory_held_bytes", "thallus_streams_open", "thallus_clients", "thallus_credit_stalls_total");

      HttpResponse<String> health = http.send(HttpRequest.newBuilder(metrics.resolve("/health")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(health.statusCode()).isEqualTo(200);
      assertThat(health.body()).contains("accepting queries");
    }
  }

  @Test
  void serveTakesItsSettingsFromAConfigFileWhichFlagsOverrideAndWhichNamesAnUnknownKey() throws Exception {
    Path config = temp.resolve("thallus.properties");
    Files.writeString(config, "data-root=" + temp + "\nport=0\ntransports=tcp\nmemory-per-client=268435456\n");
    try (ChildJvm serve = ChildJvm.start(ThallusCli.class, "--log-level", "info", "serve", "--config",
        config.toString(), "--transports", "ipc")) {
      String serving = serve.awaitLine("thallus serving", 60);
      assertThat(serving).contains(temp.toString()).endsWith("over [ipc]");
    }

    Path misspelt = temp.resolve("misspelt.properties");
    Files.writeString(misspelt, "data-root=" + temp + "\nmemory-per-clint=1\n");
    Run refused = cli("serve", "--config", misspelt.toString());
    assertThat(refused.exitCode()).isEqualTo(1);
    assertThat(refused.err()).contains("unknown setting 'memory-per-clint'").contains("memory-per-client");

    Run noRoot = cli("serve", "--port", "0");
    assertThat(noRoot.exitCode()).isEqualTo(2);
    assertThat(noRoot.err()).contains("a data root is required");

    Run badLevel = cli("--log-level", "loud", "demo");
    assertThat(badLevel.exitCode()).isEqualTo(1);
    assertThat(badLevel.err()).contains("--log-level must be one of");
  }

  @Test
  void aServerStoppedWithSigtermClosesBeforeTheJvmEndsAndLeavesNoSharedMemory() throws Exception {
    try (ChildJvm serve = ChildJvm.start(ThallusCli.class, "serve", "--data-root", temp.toString(), "--port", "0",
        "--transports", "shm");
         BufferAllocator allocator = new RootAllocator()) {
      String serving = serve.awaitLine("thallus serving", 60);
      Location location = Location.parse(serving.substring(serving.indexOf("thallus://"), serving.indexOf(" over ")));
      try (ThallusClient client = ThallusClient.connect(allocator, location);
           ThallusStream stream = client.query(QueryRequest.builder("SELECT i FROM range(100000) t(i)").build())) {
        while (stream.hasNext()) {
          stream.next().close();
        }
        assertThat(SameHostTest.segmentFolders(serve.pid())).as("the server's shared memory").isNotEmpty();
        // SIGTERM, as Ctrl-C or a service manager stops it; the client is still connected and removes nothing.
        ProcessHandle.of(serve.pid()).orElseThrow().destroy();
        List<String> output = serve.awaitExit(30);
        assertThat(SameHostTest.segmentFolders(serve.pid())).as("after the server exited: " + output).isEmpty();
      }
    }
  }

  private static String scrape(HttpClient http, URI metrics) throws IOException, InterruptedException {
    HttpResponse<String> response = http.send(HttpRequest.newBuilder(metrics).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).isEqualTo(200);
    return response.body();
  }

  /** Scrapes until {@code name} reaches {@code atLeast}: a stream's end is counted just after its END is sent. */
  private static String awaitMetric(HttpClient http, URI metrics, String name, double atLeast)
      throws IOException, InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    String text = scrape(http, metrics);
    while (sample(text, name) < atLeast && System.nanoTime() < deadline) {
      Thread.sleep(50);
      text = scrape(http, metrics);
    }
    assertThat(sample(text, name)).as(name).isGreaterThanOrEqualTo(atLeast);
    return text;
  }

  /** The value of one sample in Prometheus text, 0 when it is not there (a counter not yet touched). */
  private static double sample(String text, String name) {
    for (String line : text.split("\n")) {
      if (line.startsWith(name + " ")) {
        return Double.parseDouble(line.substring(name.length() + 1).trim().split(" ")[0]);
      }
    }
    return 0;
  }
}
