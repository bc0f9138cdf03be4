package io.thallus.cli;

import io.thallus.ClientOptions;
import io.thallus.Location;
import io.thallus.QueryRequest;
import io.thallus.ThallusClient;
import io.thallus.ThallusServer;
import io.thallus.ThallusStream;
import io.thallus.duckdb.DuckDBEngine;
import io.thallus.internal.Transports;
import io.thallus.spi.BatchContents;
import io.thallus.spi.PreparedQueryEngine;
import io.thallus.spi.Transport;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Starts a server on a generated table kept in server memory, pulls it over every transport this machine has and
 * over a raw socket (the ceiling for anything on TCP), and prints what each achieved side by side.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
    description = "Pull a generated table over every transport available here and compare their speed.")
final class DemoCommand implements Callable<Integer> {
  static final String RAW_SOCKET = "raw socket";
  static final String MEMCPY = "memcpy";

  @Option(names = "--rows", defaultValue = "10000000", description = "Rows in the table (default: ${DEFAULT-VALUE}).")
  long rows;

  @Option(names = "--columns", defaultValue = "8", description = "BIGINT columns (default: ${DEFAULT-VALUE}).")
  int columns;

  @Option(names = "--batch-rows", defaultValue = "65536", description = "Rows per batch (default: ${DEFAULT-VALUE}).")
  int batchRows;

  @Option(names = "--runs", defaultValue = "5", description = "Timed pulls per transport (default: ${DEFAULT-VALUE}).")
  int runs;

  @Option(names = "--credits", defaultValue = "4", description = "Batches in flight per stream (default: ${DEFAULT-VALUE}).")
  int credits;

  @Option(names = "--transports", split = ",", description = "Transports to compare (default: all available).")
  List<String> transports = List.of();

  @Override
  public Integer call() throws Exception {
    String sql = "SELECT " + IntStream.range(0, columns).mapToObj(c -> "i * " + (c + 1) + " AS c" + c)
        .collect(Collectors.joining(", ")) + " FROM range(" + rows + ") t(i)";
    // Named transports are used as named (an unusable one is an error); by default, every one usable here.
    List<String> names = Transports.enabled(transports).stream()
        .filter(t -> !transports.isEmpty() || t.isAvailableFor("127.0.0.1")).map(Transport::name).toList();
    System.out.printf(Locale.ROOT, "Thallus demo: %,d rows x %d BIGINT in %,d-row batches, prepared in server memory;"
        + " %d timed pulls each%n", rows, columns, batchRows, runs);
    System.out.printf(Locale.ROOT, "machine: %d cores, Java %s%n", Runtime.getRuntime().availableProcessors(),
        Runtime.version());
    try (BufferAllocator allocator = new RootAllocator();
         BufferAllocator preparedMemory = allocator.newChildAllocator("prepared", 0, Long.MAX_VALUE);
         PreparedQueryEngine engine = new PreparedQueryEngine(DuckDBEngine.create(), preparedMemory);
         ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0)).engine(engine)
             .build().start()) {
      long bytes = engine.prepare(sql, batchRows);
      List<BatchContents> prepared = engine.batches(sql, batchRows);
      long expected = checksum(prepared);
      System.out.printf(Locale.ROOT, "prepared %,d batches, %.1f MB, checksum %016x%n%n", prepared.size(),
          bytes / 1e6, expected);

      Map<String, List<Double>> seconds = new LinkedHashMap<>();
      Map<String, Long> checksums = new LinkedHashMap<>();
      Map<String, ThallusClient> clients = new LinkedHashMap<>();
      Map<String, List<Cpu>> cpu = new LinkedHashMap<>();
      try (BufferAllocator clientMemory = new RootAllocator()) {
        try {
          // One long-lived client per transport, as an application has: connection set-up is not what is timed.
          ClientOptions options = ClientOptions.builder().batchRows(batchRows).credits(credits).build();
          for (String name : names) {
            clients.put(name, ThallusClient.connect(clientMemory, server.getLocation().withTransport(name), options));
            seconds.put(name, new ArrayList<>());
          }
          seconds.put(RAW_SOCKET, new ArrayList<>());
          seconds.put(MEMCPY, new ArrayList<>());
          // Verify each transport once (this also warms its receive buffers), then time them interleaved so they
          // share the machine's noise.
          for (String name : names) {
            checksums.put(name, pull(clients.get(name), sql, true, null, null));
          }
          checksums.put(RAW_SOCKET, expected);
          checksums.put(MEMCPY, expected);
          try (RawSocketBaseline raw = new RawSocketBaseline(prepared);
               MemcpyBaseline memcpy = new MemcpyBaseline(prepared)) {
            raw.transferSeconds();
            memcpy.copySeconds();
            for (int run = 1; run <= runs; run++) {
              for (String name : names) {
                try (Progress progress = new Progress(System.err, name + " run " + run, rows)) {
                  long start = System.nanoTime();
                  pull(clients.get(name), sql, false, progress, cpu.computeIfAbsent(name, n -> new ArrayList<>()));
                  seconds.get(name).add((System.nanoTime() - start) / 1e9);
                }
              }
              seconds.get(RAW_SOCKET).add(raw.transferSeconds());
              seconds.get(MEMCPY).add(memcpy.copySeconds());
            }
          }
        } finally {
          clients.values().forEach(ThallusClient::close);
        }
      }
      return report(seconds, checksums, cpu, expected, bytes) ? 0 : 1;
    }
  }

  /** What one pull cost in CPU, on each side. */
  record Cpu(long serverNanos, long clientNanos) {}

  /**
   * One pull of the whole result; returns its checksum when asked (else 0, so timing excludes the pass), and adds
   * the CPU time each side spent to {@code cpu}: the server stream's own (reported in END) plus the event loops'.
   */
  private long pull(ThallusClient client, String sql, boolean verify, Progress progress, List<Cpu> cpu) {
    long serverLoops = threadCpu("thallus-server-");
    long clientThreads = threadCpu("thallus-client-") + THREADS.getCurrentThreadCpuTime();
    try (ThallusStream stream = client.query(QueryRequest.builder(sql).batchRows(batchRows).build())) {
      long checksum = 0;
      while (stream.hasNext()) {
        try (VectorSchemaRoot batch = stream.next()) {
          if (verify) {
            checksum = combine(checksum, batch);
          }
          if (progress != null) {
            progress.advance(batch.getRowCount());
          }
        }
      }
      if (cpu != null) {
        long streamCpu = stream.stats().map(stats -> stats.serverCpuTime().toNanos()).orElse(0L);
        cpu.add(new Cpu(streamCpu + threadCpu("thallus-server-") - serverLoops,
            threadCpu("thallus-client-") + THREADS.getCurrentThreadCpuTime() - clientThreads));
      }
      return checksum;
    }
  }

  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  /** CPU time of the live threads whose names start with {@code prefix} (stream threads report their own). */
  private static long threadCpu(String prefix) {
    long total = 0;
    for (Thread thread : Thread.getAllStackTraces().keySet()) {
      if (thread.getName().startsWith(prefix) && !thread.getName().startsWith("thallus-server-stream-")) {
        total += Math.max(0, THREADS.getThreadCpuTime(thread.threadId()));
      }
    }
    return total;
  }

  private boolean report(Map<String, List<Double>> seconds, Map<String, Long> checksums, Map<String, List<Cpu>> cpu,
      long expected, long bytes) {
    TextTable table = new TextTable(List.of("transport", "median s", "GB/s", "best GB/s", "M rows/s", "x ipc",
        "server CPU s/GB", "client CPU s/GB", "checksum"));
    double ipcMedian = seconds.containsKey("ipc") ? median(seconds.get("ipc")) : Double.NaN;
    boolean agree = true;
    for (Map.Entry<String, List<Double>> entry : seconds.entrySet()) {
      double median = median(entry.getValue());
      double best = entry.getValue().stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN);
      long checksum = checksums.get(entry.getKey());
      boolean matches = checksum == expected;
      agree &= matches;
      boolean ceiling = entry.getKey().equals(RAW_SOCKET) || entry.getKey().equals(MEMCPY);
      String name = ceiling ? entry.getKey() + " (ceiling)" : entry.getKey();
      List<Cpu> spent = cpu.getOrDefault(entry.getKey(), List.of());
      double gigabytes = spent.size() * bytes / 1e9;
      String serverCpu = spent.isEmpty() ? "-"
          : fmt("%.3f", spent.stream().mapToLong(Cpu::serverNanos).sum() / 1e9 / gigabytes);
      String clientCpu = spent.isEmpty() ? "-"
          : fmt("%.3f", spent.stream().mapToLong(Cpu::clientNanos).sum() / 1e9 / gigabytes);
      table.add(List.of(name, fmt("%.3f", median), fmt("%.2f", bytes / median / 1e9), fmt("%.2f", bytes / best / 1e9),
          fmt("%.1f", rows / median / 1e6), Double.isNaN(ipcMedian) ? "-" : fmt("%.2fx", ipcMedian / median),
          serverCpu, clientCpu, String.format(Locale.ROOT, "%016x%s", checksum, matches ? "" : " MISMATCH")));
    }
    System.out.println();
    table.print(System.out);
    if (Boolean.getBoolean("thallus.demo.verbose")) {
      seconds.forEach((name, times) -> System.out.println(name + " runs (s): " + times));
    }
    System.out.println();
    if (seconds.containsKey("tcp")) {
      System.out.printf(Locale.ROOT, "tcp reaches %.0f%% of the raw socket's throughput%n",
          100 * median(seconds.get(RAW_SOCKET)) / median(seconds.get("tcp")));
    }
    for (String sameHost : List.of("shm", "cma")) {
      if (seconds.containsKey(sameHost)) {
        System.out.printf(Locale.ROOT, "%s reaches %.0f%% of a single-thread memcpy%n", sameHost,
            100 * median(seconds.get(MEMCPY)) / median(seconds.get(sameHost)));
      }
    }
    System.out.println(agree ? "all checksums agree with the prepared data"
        : "CHECKSUMS DISAGREE: some transport delivered different data");
    return agree;
  }

  /** An order-sensitive checksum of every BIGINT value (column position and row order both count). */
  static long combine(long checksum, VectorSchemaRoot batch) {
    long result = checksum;
    List<FieldVector> vectors = batch.getFieldVectors();
    for (int c = 0; c < vectors.size(); c++) {
      BigIntVector vector = (BigIntVector) vectors.get(c);
      for (int row = 0; row < batch.getRowCount(); row++) {
        result = result * 31 + (vector.isNull(row) ? 7 : vector.get(row) * (2L * c + 1));
      }
    }
    return result;
  }

  private static long checksum(List<BatchContents> prepared) {
    long checksum = 0;
    for (BatchContents batch : prepared) {
      List<ArrowBuf> buffers = batch.records().getBuffers();
      int count = batch.rowCount();
      // Buffers come in pairs per BIGINT column: validity, then values.
      for (int c = 0; c < buffers.size() / 2; c++) {
        ArrowBuf validity = buffers.get(2 * c);
        ArrowBuf values = buffers.get(2 * c + 1);
        boolean allValid = validity.readableBytes() == 0 || batch.records().getNodes().get(c).getNullCount() == 0;
        for (int row = 0; row < count; row++) {
          boolean valid = allValid || (validity.getByte(row >> 3) & (1 << (row & 7))) != 0;
          checksum = checksum * 31 + (valid ? values.getLong((long) row * Long.BYTES) * (2L * c + 1) : 7);
        }
      }
    }
    return checksum;
  }

  private static double median(List<Double> values) {
    double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    return sorted.length == 0 ? Double.NaN : sorted.length % 2 == 1 ? sorted[sorted.length / 2]
        : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
  }

  private static String fmt(String format, double value) {
    return String.format(Locale.ROOT, format, value);
  }
}
