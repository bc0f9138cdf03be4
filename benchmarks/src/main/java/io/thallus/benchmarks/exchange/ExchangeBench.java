package io.thallus.benchmarks.exchange;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Push against place-and-pull between exchange endpoints in separate JVMs on this host: {@code workers} executor
 * JVMs ({@link ExchangeWorker}), each running {@code maps / workers} map tasks over the longs 0..rows-1 hash-partitioned
 * into {@code partitions}, then reducing its share of the partitions (p % workers) from every worker. Each run is a
 * new shuffle; modes alternate within a round, so push and pull run side by side. Prints one line per run and a
 * table of medians; with {@code --strace}, runs the workers under strace once more per mode and counts the writes to
 * TCP sockets (control frames and tcp's body writes: every network message) per reduce task per peer.
 *
 * <pre>
 * java $FLAGS -cp benchmarks/target/benchmarks.jar io.thallus.benchmarks.exchange.ExchangeBench \
 *   [--rows 5000000] [--maps 4] [--partitions 200] [--workers 2] [--transports shm,tcp] [--runs 3]
 *   [--memory-bound 1073741824] [--push-buffer 268435456] [--warmups 1] [--modes push,pull] [--strace]
 * </pre>
 */
public final class ExchangeBench {
  private ExchangeBench() {}

  /** One worker JVM, driven a line at a time. */
  private static final class Worker implements AutoCloseable {
    final Process process;
    final PrintWriter in;
    final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    String address;

    Worker(List<String> command) throws IOException {
      process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
      in = new PrintWriter(process.getOutputStream(), true, StandardCharsets.UTF_8);
      Thread.ofPlatform().daemon().start(() -> {
        try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(),
            StandardCharsets.UTF_8))) {
          String line;
          while ((line = out.readLine()) != null) {
            lines.add(line);
          }
        } catch (IOException ignored) {
          // The worker is gone; await fails at its deadline.
        }
      });
    }

    void send(String command) {
      in.println(command);
    }

    String await(String prefix) throws InterruptedException {
      long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
      while (System.nanoTime() < deadline) {
        String line = lines.poll(1, TimeUnit.SECONDS);
        if (line == null) {
          if (!process.isAlive()) {
            throw new IllegalStateException("worker died with " + process.exitValue());
          }
          continue;
        }
        if (line.startsWith(prefix)) {
          return line;
        }
        if (line.startsWith("ERROR")) {
          throw new IllegalStateException(line);
        }
      }
      throw new IllegalStateException("no " + prefix + " within 10 minutes");
    }

    @Override
    public void close() throws InterruptedException {
      send("QUIT");
      if (!process.waitFor(60, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      }
    }
  }

  /** One run's figures. */
  record Run(String transport, String mode, long mapMs, long reduceMs, long totalMs, long mapBytes, long pulls,
      long pulledBatches, long pulledBytes, long pushedBatchesRead, long pushes, long pushedBytes, long refused) {}

  public static void main(String[] args) throws Exception {
    Map<String, String> options = new LinkedHashMap<>(Map.of("rows", "5000000", "maps", "4", "partitions", "200",
        "workers", "2", "transports", "shm,tcp", "runs", "3", "memory-bound", Long.toString(1L << 30),
        "modes", "push,pull", "warmups", "1", "push-buffer", Long.toString(256L << 20)));
    boolean strace = false;
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--strace")) {
        strace = true;
      } else if (args[i].startsWith("--") && i + 1 < args.length && options.containsKey(args[i].substring(2))) {
        options.put(args[i].substring(2), args[++i]);
      } else {
        throw new IllegalArgumentException("unknown argument " + args[i] + "; options: " + options.keySet()
            + " --strace");
      }
    }
    long rows = Long.parseLong(options.get("rows"));
    int maps = Integer.parseInt(options.get("maps"));
    int partitions = Integer.parseInt(options.get("partitions"));
    int workers = Integer.parseInt(options.get("workers"));
    int runs = Integer.parseInt(options.get("runs"));
    if (maps % workers != 0) {
      throw new IllegalArgumentException("maps must be a multiple of workers");
    }
    List<String> modes = List.of(options.get("modes").split(","));
    PUSH_BUFFER[0] = options.get("push-buffer");
    System.out.printf(Locale.ROOT, "# %d rows (longs), %d maps, %d partitions, %d worker JVMs, %d cores, %s%n", rows,
        maps, partitions, workers, Runtime.getRuntime().availableProcessors(), options);
    List<Run> all = new ArrayList<>();
    Path spill = Files.createTempDirectory("exchange-bench");
    int[] shuffle = {0};
    for (String transport : options.get("transports").split(",")) {
      List<Worker> pool = start(transport, spill, options.get("memory-bound"), workers, null);
      try {
        // Untimed rounds first: the workers' JIT and first page faults, which made a cold first run twice as slow.
        for (int r = 0; r < Integer.parseInt(options.get("warmups")); r++) {
          for (String mode : modes) {
            run(pool, transport, mode, ++shuffle[0], rows, maps / workers, partitions);
          }
        }
        for (int r = 0; r < runs; r++) {
          for (String mode : modes) {
            Run run = run(pool, transport, mode, ++shuffle[0], rows, maps / workers, partitions);
            all.add(run);
            System.out.println(run);
          }
        }
      } finally {
        for (Worker worker : pool) {
          worker.close();
        }
      }
      if (strace) {
        for (String mode : modes) {
          countMessages(transport, mode, spill, options.get("memory-bound"), workers, rows, maps / workers,
              partitions, ++shuffle[0]);
        }
      }
    }
    printMedians(all, modes, partitions);
  }

  private static List<Worker> start(String transport, Path spill, String memoryBound, int workers, Path traces)
      throws Exception {
    List<Worker> pool = new ArrayList<>();
    for (int w = 0; w < workers; w++) {
      List<String> command = new ArrayList<>();
      if (traces != null) {
        command.addAll(List.of("strace", "-f", "-qq", "-yy", "-s", "24", "-e",
            "trace=write,writev,sendto,sendmsg", "-o", traces.resolve("worker-" + w + ".trace").toString()));
      }
      command.add(ProcessHandle.current().info().command().orElse("java"));
      command.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments());
      command.addAll(List.of("-cp", System.getProperty("java.class.path"), ExchangeWorker.class.getName(),
          transport, spill.toString(), memoryBound, Integer.toString(w), PUSH_BUFFER[0]));
      Worker worker = new Worker(command);
      worker.address = worker.await("ADDRESS").split(" ")[1];
      pool.add(worker);
    }
    String peers = "PEERS " + String.join(" ", pool.stream().map(w -> w.address).toList());
    for (Worker worker : pool) {
      worker.send(peers);
      worker.await("OK");
    }
    return pool;
  }

  private static Run run(List<Worker> pool, String transport, String mode, int shuffle, long rows, int mapsPerWorker,
      int partitions) throws Exception {
    long[] before = new long[8];
    long start = System.nanoTime();
    for (Worker worker : pool) {
      worker.send("MAP " + shuffle + " " + mode + " " + rows + " " + mapsPerWorker + " " + partitions);
    }
    long mapBytes = 0;
    for (Worker worker : pool) {
      mapBytes += Long.parseLong(worker.await("MAPPED").split(" ")[2]);
    }
    long mapped = System.nanoTime();
    for (Worker worker : pool) {
      worker.send("REDUCE " + shuffle + " " + partitions + " " + mapsPerWorker);
    }
    long total = 0;
    long sum = 0;
    long[] stats = new long[8];
    for (Worker worker : pool) {
      String[] words = worker.await("REDUCED").split(" ");
      total += Long.parseLong(words[2]);
      sum += Long.parseLong(words[3]);
      for (int i = 0; i < 8; i++) {
        stats[i] += Long.parseLong(words[4 + i]);
      }
    }
    long end = System.nanoTime();
    for (Worker worker : pool) {
      worker.send("REMOVE " + shuffle);
      worker.await("REMOVED");
    }
    long expectedSum = rows * (rows - 1) / 2;
    if (total != rows || sum != expectedSum) {
      throw new IllegalStateException("shuffle " + shuffle + " read " + total + " rows summing to " + sum
          + "; expected " + rows + " and " + expectedSum);
    }
    Run last = LAST.get(transport);
    long[] delta = new long[8];
    for (int i = 0; i < 8; i++) {
      delta[i] = stats[i] - (last == null ? 0 : CUMULATIVE.get(transport)[i]);
    }
    CUMULATIVE.put(transport, stats);
    Run run = new Run(transport, mode, (mapped - start) / 1_000_000, (end - mapped) / 1_000_000,
        (end - start) / 1_000_000, mapBytes, delta[0], delta[1], delta[2], delta[3], delta[4], delta[5], delta[6]);
    LAST.put(transport, run);
    return run;
  }

  /** Each worker's push buffer per peer (the endpoint's default unless --push-buffer says). */
  private static final String[] PUSH_BUFFER = {""};
  private static final Map<String, Run> LAST = new LinkedHashMap<>();
  private static final Map<String, long[]> CUMULATIVE = new LinkedHashMap<>();

  /** Runs one shuffle with the workers under strace and counts the writes to TCP sockets between its marks. */
  private static void countMessages(String transport, String mode, Path spill, String memoryBound, int workers,
      long rows, int mapsPerWorker, int partitions, int shuffle) throws Exception {
    Path traces = Files.createTempDirectory("exchange-trace");
    List<Worker> pool = start(transport, spill, memoryBound, workers, traces);
    String key = transport + "/" + mode;
    LAST.remove(key);
    try {
      for (Worker worker : pool) {
        worker.send("MARK begin");
        worker.await("MARK begin");
      }
      run(pool, key, mode, shuffle, rows, mapsPerWorker, partitions);
      for (Worker worker : pool) {
        worker.send("MARK end");
        worker.await("MARK end");
      }
    } finally {
      for (Worker worker : pool) {
        worker.close();
      }
    }
    long writes = 0;
    for (int w = 0; w < workers; w++) {
      writes += countTcpWrites(traces.resolve("worker-" + w + ".trace"));
    }
    // Each reduce task reads from workers - 1 peers.
    long peerReads = (long) partitions * (workers - 1);
    System.out.printf(Locale.ROOT, "MESSAGES %s %s: %d socket writes in both directions during the shuffle (maps "
        + "and reduces), %.2f per reduce task per peer%n", transport, mode, writes, (double) writes / peerReads);
  }

  /** Writes to TCP sockets between the trace's "MARK begin" and "MARK end" lines. */
  static long countTcpWrites(Path trace) throws IOException {
    boolean counting = false;
    long count = 0;
    for (String line : Files.readAllLines(trace)) {
      if (line.contains("\"MARK begin")) {
        counting = true;
      } else if (line.contains("\"MARK end")) {
        counting = false;
      } else if (counting && line.contains("TCP") && !line.contains("resumed>")
          && (line.contains(" write(") || line.contains(" writev(") || line.contains(" sendto(")
              || line.contains(" sendmsg("))) {
        count++;
      }
    }
    return count;
  }

  private static void printMedians(List<Run> all, List<String> modes, int partitions) {
    System.out.println();
    System.out.println("| transport | mode | total ms (median) | map ms | reduce ms | pulls per reduce task per peer "
        + "| pulled batches | pushes | pushed MB | refused | runs (total ms) |");
    System.out.println("|---|---|---|---|---|---|---|---|---|---|---|");
    Map<String, List<Run>> grouped = new LinkedHashMap<>();
    for (Run run : all) {
      grouped.computeIfAbsent(run.transport() + " " + run.mode(), k -> new ArrayList<>()).add(run);
    }
    grouped.forEach((key, runs) -> {
      Run first = runs.get(0);
      System.out.printf(Locale.ROOT, "| %s | %s | %d | %d | %d | %.2f | %d | %d | %.1f | %d | %s |%n",
          first.transport(), first.mode(), median(runs.stream().mapToLong(Run::totalMs).toArray()),
          median(runs.stream().mapToLong(Run::mapMs).toArray()),
          median(runs.stream().mapToLong(Run::reduceMs).toArray()),
          (double) first.pulls() / partitions, first.pulledBatches(), first.pushes(),
          first.pushedBytes() / 1e6, first.refused(),
          runs.stream().map(r -> Long.toString(r.totalMs())).toList());
    });
  }

  private static long median(long[] values) {
    long[] sorted = values.clone();
    java.util.Arrays.sort(sorted);
    return sorted[sorted.length / 2];
  }
}
