package io.thallus.benchmarks.exchange;

import io.thallus.exchange.EndpointAddress;
import io.thallus.exchange.EndpointOptions;
import io.thallus.exchange.ExchangeEndpoint;
import io.thallus.exchange.ExchangeStats;
import io.thallus.exchange.MapOutput;
import io.thallus.exchange.PartitionReader;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * One executor of {@link ExchangeBench}: an exchange endpoint in its own JVM that runs map tasks (each makes its
 * share of the longs 0..rows-1, hash-partitioned, 64K rows at a time) and reduce tasks (reads its partitions, sums
 * them) when the coordinator says, one command a line on stdin, one answer a line on stdout.
 * Args: peer transport, spill folder, memory bound in bytes, worker index, push buffer per peer in bytes.
 */
public final class ExchangeWorker {
  static final Schema SCHEMA = new Schema(List.of(new Field("v", FieldType.notNullable(new ArrowType.Int(64, true)),
      null)));
  private static final int CHUNK = 65_536;

  private final ExchangeEndpoint endpoint;
  private final BufferAllocator allocator;
  private final int index;
  private List<EndpointAddress> peers = List.of();

  private ExchangeWorker(ExchangeEndpoint endpoint, BufferAllocator allocator, int index) {
    this.endpoint = endpoint;
    this.allocator = allocator;
    this.index = index;
  }

  public static void main(String[] args) throws Exception {
    String transport = args[0];
    Path spill = Path.of(args[1]);
    long memoryBound = Long.parseLong(args[2]);
    int index = Integer.parseInt(args[3]);
    long pushBuffer = Long.parseLong(args[4]);
    try (BufferAllocator allocator = new RootAllocator();
         ExchangeEndpoint endpoint = ExchangeEndpoint.start(EndpointOptions.builder(allocator, spill)
             .peerTransport(transport).memoryBound(memoryBound).pushBufferBytesPerPeer(pushBuffer)
             .timeout(Duration.ofMinutes(5)).build())) {
      System.out.println("ADDRESS " + endpoint.address());
      new ExchangeWorker(endpoint, allocator, index).serve();
    }
  }

  private void serve() throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      String[] words = line.split(" ");
      String answer = switch (words[0]) {
        case "PEERS" -> {
          peers = Arrays.stream(words).skip(1).map(EndpointAddress::parse).toList();
          yield "OK";
        }
        case "MAP" -> map(Integer.parseInt(words[1]), words[2].equals("push"), Long.parseLong(words[3]),
            Integer.parseInt(words[4]), Integer.parseInt(words[5]));
        case "REDUCE" -> reduce(Integer.parseInt(words[1]), Integer.parseInt(words[2]), Integer.parseInt(words[3]));
        case "REMOVE" -> {
          endpoint.removeShuffle(Integer.parseInt(words[1]));
          yield "REMOVED";
        }
        case "MARK" -> line;
        case "QUIT" -> null;
        default -> "ERROR unknown command " + words[0];
      };
      if (answer == null) {
        return;
      }
      System.out.println(answer);
      System.out.flush();
    }
  }

  /** Runs this worker's maps (mapsPerWorker of them) of a shuffle of {@code rows} longs in {@code partitions}. */
  private String map(int shuffle, boolean push, long rows, int mapsPerWorker, int partitions) throws Exception {
    long start = System.nanoTime();
    int maps = mapsPerWorker * peers.size();
    List<EndpointAddress> targets = new ArrayList<>(partitions);
    for (int p = 0; p < partitions; p++) {
      targets.add(push ? peers.get(p % peers.size()) : null);
    }
    long[] bytes = new long[partitions];
    try (VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, allocator)) {
      BigIntVector values = (BigIntVector) root.getVector(0);
      for (int k = 0; k < mapsPerWorker; k++) {
        int mapId = index * mapsPerWorker + k;
        long from = rows * mapId / maps;
        long to = rows * (mapId + 1) / maps;
        try (MapOutput output = endpoint.open(shuffle, mapId, SCHEMA, partitions, targets)) {
          long[] chunk = new long[CHUNK];
          int[] partitionOf = new int[CHUNK];
          int[] counts = new int[partitions];
          for (long at = from; at < to; at += CHUNK) {
            int n = (int) Math.min(CHUNK, to - at);
            Arrays.fill(counts, 0);
            for (int i = 0; i < n; i++) {
              chunk[i] = at + i;
              partitionOf[i] = Math.floorMod(Long.hashCode(mix(at + i)), partitions);
              counts[partitionOf[i]]++;
            }
            // One batch per partition of this chunk, as a hash-partitioning map task makes them.
            int[] starts = new int[partitions + 1];
            for (int p = 0; p < partitions; p++) {
              starts[p + 1] = starts[p] + counts[p];
            }
            long[] sorted = new long[n];
            int[] fill = Arrays.copyOf(starts, partitions);
            for (int i = 0; i < n; i++) {
              sorted[fill[partitionOf[i]]++] = chunk[i];
            }
            for (int p = 0; p < partitions; p++) {
              int count = counts[p];
              if (count == 0) {
                continue;
              }
              values.allocateNew(count);
              for (int i = 0; i < count; i++) {
                values.set(i, sorted[starts[p] + i]);
              }
              root.setRowCount(count);
              output.add(p, root);
            }
          }
          long[] sizes = output.commit();
          for (int p = 0; p < partitions; p++) {
            bytes[p] += sizes[p];
          }
        }
      }
    }
    if (push && !endpoint.awaitPushes(Duration.ofMinutes(5))) {
      return "ERROR pushes still queued after 5 minutes";
    }
    long total = Arrays.stream(bytes).sum();
    return "MAPPED " + (System.nanoTime() - start) / 1_000_000 + " " + total;
  }

  /** Reads this worker's partitions (p % workers == index) from every worker's maps; answers rows, sum, stats. */
  private String reduce(int shuffle, int partitions, int mapsPerWorker) {
    long start = System.nanoTime();
    Map<EndpointAddress, List<Long>> locations = new LinkedHashMap<>();
    for (int w = 0; w < peers.size(); w++) {
      List<Long> maps = new ArrayList<>();
      for (int k = 0; k < mapsPerWorker; k++) {
        maps.add((long) w * mapsPerWorker + k);
      }
      locations.put(peers.get(w), maps);
    }
    long rows = 0;
    long sum = 0;
    for (int p = index; p < partitions; p += peers.size()) {
      try (PartitionReader reader = endpoint.read(shuffle, p, locations)) {
        VectorSchemaRoot batch;
        while ((batch = reader.next()) != null) {
          BigIntVector values = (BigIntVector) batch.getVector(0);
          int n = batch.getRowCount();
          for (int i = 0; i < n; i++) {
            sum += values.get(i);
          }
          rows += n;
        }
      }
    }
    ExchangeStats s = endpoint.stats();
    return "REDUCED " + (System.nanoTime() - start) / 1_000_000 + " " + rows + " " + sum + " " + s.pullRequests()
        + " " + s.pulledBatches() + " " + s.pulledBytes() + " " + s.pushedBatchesRead() + " " + s.pushes() + " "
        + s.pushedBytes() + " " + s.pushesRefused() + " " + s.spilledBytes();
  }

  /** A 64-bit mix (splitmix64's finalizer), so consecutive longs spread over the partitions. */
  static long mix(long x) {
    x = (x ^ (x >>> 30)) * 0xbf58476d1ce4e5b9L;
    x = (x ^ (x >>> 27)) * 0x94d049bb133111ebL;
    return x ^ (x >>> 31);
  }
}
