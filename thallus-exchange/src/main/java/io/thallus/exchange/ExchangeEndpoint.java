package io.thallus.exchange;

import io.thallus.ClientOptions;
import io.thallus.Location;
import io.thallus.ThallusException;
import io.thallus.exchange.internal.Counters;
import io.thallus.exchange.internal.ExchangeEngine;
import io.thallus.exchange.internal.MapOutputStore;
import io.thallus.exchange.internal.PeerClients;
import io.thallus.exchange.internal.PushSender;
import io.thallus.exchange.internal.PushedStore;
import io.thallus.exchange.internal.StoredMapOutput;
import io.thallus.server.Authentication;
import io.thallus.server.ThallusServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * One JVM's end of the exchange (a Spark executor's). It keeps the map outputs made here until their shuffle is
 * removed, serves them to peers that pull them, takes the pushes of peers for the partitions read here, and reads
 * partitions: what was pushed here, plus one pull per peer for the rest. Underneath it is a Thallus server (a pull is
 * a query of its exchange engine, a push an ingest) and one Thallus connection per peer, so it moves batches over
 * shm, cma, tcp or rdma within Thallus' credits and memory bounds. Thread-safe.
 *
 * <pre>{@code
 * try (ExchangeEndpoint endpoint = ExchangeEndpoint.start(EndpointOptions.builder(allocator, spill).build())) {
 *   try (MapOutput map = endpoint.open(shuffle, mapId, schema, partitions, pushTargets)) {
 *     map.add(partition, root); ...
 *     long[] sizes = map.commit();
 *   }
 *   try (PartitionReader reader = endpoint.read(shuffle, partition, Map.of(peer, List.of(0, 1)))) {
 *     for (VectorSchemaRoot batch; (batch = reader.next()) != null; ) { ... }
 *   }
 *   endpoint.removeShuffle(shuffle);
 * }
 * }</pre>
 */
public final class ExchangeEndpoint implements AutoCloseable {
  private final EndpointOptions options;
  private final BufferAllocator allocator;
  private final Path spillFolder;
  private final MapOutputStore outputs;
  private final PushedStore pushed = new PushedStore();
  private final Counters counters = new Counters();
  private final ThallusServer server;
  private final EndpointAddress address;
  private final PeerClients peers;
  private final PushSender pushes;
  private boolean closed;

  private ExchangeEndpoint(EndpointOptions options) {
    this.options = options;
    this.allocator = options.allocator().newChildAllocator("thallus-exchange", 0, Long.MAX_VALUE);
    try {
      Files.createDirectories(options.spillFolder());
      this.spillFolder = Files.createTempDirectory(options.spillFolder(), "exchange-");
    } catch (IOException e) {
      allocator.close();
      throw new IllegalArgumentException("cannot make a spill folder in " + options.spillFolder() + ": " + e, e);
    }
    this.outputs = new MapOutputStore(allocator.newChildAllocator("exchange-outputs", 0, Long.MAX_VALUE),
        spillFolder, options.memoryBound());
    ExchangeEngine engine = new ExchangeEngine(outputs, pushed, options.pushBufferBytesPerPeer(),
        options.joinBytes(), counters);
    this.server = ThallusServer.builder(allocator, Location.of(options.bindHost(), options.port()), engine)
        .transports(options.transports()).ioTimeout(options.timeout()).serverName("thallus-exchange")
        .authentication(options.secret().map(Authentication::token).orElse(Authentication.none()))
        .build().start();
    this.address = new EndpointAddress(options.bindHost(), server.getLocation().port());
    ClientOptions.Builder client = ClientOptions.builder().timeout(options.timeout())
        .connectTimeout(options.timeout()).clientName("thallus-exchange " + address);
    options.secret().ifPresent(client::token);
    ClientOptions clientOptions = client.build();
    this.peers = new PeerClients(allocator, options.peerTransport(), clientOptions);
    this.pushes = new PushSender(peers, allocator.newChildAllocator("exchange-pushes", 0, Long.MAX_VALUE),
        options.timeout(), counters, "thallus-exchange-push-" + address.port());
  }

  /** Starts an endpoint: binds its port and makes its spill folder (a fresh one inside the options' folder). */
  public static ExchangeEndpoint start(EndpointOptions options) {
    return new ExchangeEndpoint(Objects.requireNonNull(options, "options"));
  }

  /** Where peers reach this endpoint. */
  public EndpointAddress address() {
    return address;
  }

  /**
   * A new output for map {@code mapId} of shuffle {@code shuffleId} with {@code numPartitions} partitions of
   * {@code schema}. {@code pushTargets} has one entry per partition: the endpoint that will read it (its batches are
   * pushed there), or null for none (the reducer pulls it); this endpoint's own address means no push.
   */
  public MapOutput open(int shuffleId, long mapId, Schema schema, int numPartitions, List<EndpointAddress> pushTargets) {
    checkOpen();
    if (shuffleId < 0 || mapId < 0 || numPartitions <= 0) {
      throw new IllegalArgumentException("shuffle " + shuffleId + ", map " + mapId + ", " + numPartitions
          + " partitions: ids must not be negative and partitions must be positive");
    }
    if (pushTargets.size() != numPartitions) {
      throw new IllegalArgumentException(pushTargets.size() + " push targets for " + numPartitions + " partitions");
    }
    EndpointAddress[] targets = new EndpointAddress[numPartitions];
    for (int i = 0; i < numPartitions; i++) {
      EndpointAddress target = pushTargets.get(i);
      targets[i] = options.push() && target != null && !target.equals(address) ? target : null;
    }
    StoredMapOutput output = outputs.open(shuffleId, mapId, schema, numPartitions);
    return new MapOutput(outputs, output, targets, pushes, options.pushChunkBytes(), options.compression());
  }

  /**
   * The batches of {@code partition} of the maps in {@code locations} (each endpoint's address and the maps whose
   * output it holds, in the order to read them): pushed here already, made here, or pulled with one request per
   * peer. Pulls happen as the reader reaches them.
   */
  public PartitionReader read(int shuffleId, int partition, Map<EndpointAddress, List<Long>> locations) {
    return read(shuffleId, new TreeMap<>(Map.of(partition, locations)));
  }

  /**
   * The batches of several partitions (a reduce task's range): for each partition, each endpoint's address and the
   * maps whose output of that partition it holds, in the order to read them (partitions may name different maps).
   * Each partition's batches pushed here or made here are read here, partitions ascending; what is left is pulled
   * with ONE request per peer for all its partitions, answered partition by partition in ascending order after the
   * batches read here. Pulls happen as the reader reaches them.
   */
  public PartitionReader read(int shuffleId, SortedMap<Integer, Map<EndpointAddress, List<Long>>> partitions) {
    checkOpen();
    if (partitions.isEmpty()) {
      throw new IllegalArgumentException("a read names no partition");
    }
    List<Object> sources = new ArrayList<>();
    Map<EndpointAddress, PartitionReader.Pull> pulls = new LinkedHashMap<>();
    try {
      for (Map.Entry<Integer, Map<EndpointAddress, List<Long>>> ofPartition : partitions.entrySet()) {
        int partition = ofPartition.getKey();
        if (partition < 0) {
          throw new IllegalArgumentException("partition " + partition + " is negative");
        }
        for (Map.Entry<EndpointAddress, List<Long>> entry : ofPartition.getValue().entrySet()) {
          EndpointAddress peer = entry.getKey();
          if (peer.equals(address)) {
            List<Long> maps = List.copyOf(entry.getValue());
            sources.add(new PartitionReader.Own(() -> own(shuffleId, partition, maps)));
            continue;
          }
          List<Long> toPull = new ArrayList<>();
          for (long mapId : entry.getValue()) {
            List<ArrowRecordBatch> taken = pushed.take(shuffleId, partition, mapId);
            if (taken == null) {
              toPull.add(mapId);
              pushed.pulled(shuffleId, partition, mapId);
            } else {
              sources.add(new PartitionReader.Held(pushed.schema(shuffleId, mapId), taken, true));
            }
          }
          if (!toPull.isEmpty()) {
            pulls.computeIfAbsent(peer, PartitionReader.Pull::new).add(partition, toPull);
          }
        }
      }
    } catch (RuntimeException e) {
      for (Object source : sources) {
        if (source instanceof PartitionReader.Held held) {
          held.batches.forEach(ArrowRecordBatch::close);
        }
      }
      throw e;
    }
    sources.addAll(pulls.values());
    return new PartitionReader(shuffleId, List.copyOf(partitions.keySet()), sources, peers, allocator,
        options.timeout(), counters);
  }

  /** This endpoint's own output of {@code partition} for {@code mapIds}: read here, never pulled, when reached. */
  private PartitionReader.Held own(int shuffleId, int partition, List<Long> mapIds) {
    long[] maps = mapIds.stream().mapToLong(Long::longValue).toArray();
    try {
      List<ArrowRecordBatch> batches = outputs.read(shuffleId, partition, maps, outputs.allocator());
      Schema schema = maps.length == 0 ? null : outputs.committed(shuffleId, maps[0]).schema();
      return new PartitionReader.Held(schema, batches, false);
    } catch (ThallusException e) {
      throw new ShuffleFetchException(address, shuffleId, List.of(partition), mapIds, e);
    }
  }

  /** Frees the shuffle's map outputs and pushed batches here and deletes its spill files. */
  public void removeShuffle(int shuffleId) {
    checkOpen();
    pushed.remove(shuffleId);
    outputs.remove(shuffleId);
    pushes.forget(shuffleId);
  }

  /** Waits until this endpoint's queued pushes are sent or refused; answers false at the deadline. */
  public boolean awaitPushes(Duration atMost) throws InterruptedException {
    return pushes.awaitIdle(atMost);
  }

  /** What this endpoint has moved so far. */
  public ExchangeStats stats() {
    return new ExchangeStats(counters.pullRequests.get(), counters.pulledBatches.get(), counters.pulledBytes.get(),
        counters.pushedBatchesRead.get(), counters.pushes.get(), counters.pushedBytes.get(),
        counters.pushesRefused.get(), counters.pushesReceived.get(), counters.pushFramesReceived.get(),
        outputs.spilledBytes());
  }

  /** Bytes that peers pushed here and no reducer has taken yet. */
  public long pushedBytesHeld() {
    return pushed.heldBytes();
  }

  /** Bytes of map output held in memory now (the rest is spilled). */
  public long memoryBytes() {
    return outputs.memoryBytes();
  }

  /** This endpoint's spill folder (a fresh one inside the options' folder, deleted on close). */
  public Path spillFolder() {
    return spillFolder;
  }

  private synchronized void checkOpen() {
    if (closed) {
      throw new IllegalStateException("the exchange endpoint " + address + " is closed");
    }
  }

  /** Stops serving, drops every shuffle, deletes the spill folder and frees the memory. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    pushes.close();
    peers.close();
    server.close();
    pushed.close();
    outputs.close();
    try {
      Files.deleteIfExists(spillFolder);
    } catch (IOException ignored) {
      // A file someone else put there; the folder stays.
    }
    outputs.allocator().close();
    allocator.getChildAllocators().forEach(BufferAllocator::close);
    allocator.close();
  }
}
