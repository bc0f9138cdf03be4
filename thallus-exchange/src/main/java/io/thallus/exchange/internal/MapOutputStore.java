package io.thallus.exchange.internal;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The map outputs this endpoint made, by shuffle and map id, within one memory bound: a batch that takes the
 * outputs past it spills the adding output (then the largest others) to the local disk, under
 * {@code <spill folder>/shuffle-<id>/map-<id>.arrows}.
 */
public final class MapOutputStore implements AutoCloseable {
  private final BufferAllocator allocator;
  private final Path spillFolder;
  private final long memoryBound;
  private final Map<Integer, Map<Long, StoredMapOutput>> shuffles = new ConcurrentHashMap<>();
  private final AtomicLong memoryBytes = new AtomicLong();
  private final AtomicLong spilledBytes = new AtomicLong();

  public MapOutputStore(BufferAllocator allocator, Path spillFolder, long memoryBound) {
    this.allocator = allocator;
    this.spillFolder = spillFolder;
    this.memoryBound = memoryBound;
  }

  public BufferAllocator allocator() {
    return allocator;
  }

  /** A new, empty output for map {@code mapId}; a map attempt made again replaces the earlier one. */
  public StoredMapOutput open(int shuffleId, long mapId, Schema schema, int numPartitions) {
    Path path = spillFolder.resolve("shuffle-" + shuffleId).resolve("map-" + mapId + "-" + System.nanoTime()
        + ".arrows");
    StoredMapOutput output = new StoredMapOutput(shuffleId, mapId, schema, numPartitions, path);
    StoredMapOutput earlier = shuffles.computeIfAbsent(shuffleId, id -> new ConcurrentHashMap<>()).put(mapId, output);
    if (earlier != null) {
      memoryBytes.addAndGet(-earlier.close());
    }
    return output;
  }

  /** Adds a batch the store owns from now on, spilling past the memory bound. */
  public void add(StoredMapOutput output, int partition, ArrowRecordBatch batch) {
    long total = memoryBytes.addAndGet(output.add(partition, batch));
    if (total > memoryBound) {
      spillDownTo(output);
    }
  }

  private void spillDownTo(StoredMapOutput first) {
    long freed = first.spill();
    memoryBytes.addAndGet(-freed);
    spilledBytes.addAndGet(freed);
    if (memoryBytes.get() <= memoryBound) {
      return;
    }
    List<StoredMapOutput> others = new ArrayList<>();
    shuffles.values().forEach(maps -> others.addAll(maps.values()));
    others.sort(Comparator.comparingLong(StoredMapOutput::memoryBytes).reversed());
    for (StoredMapOutput other : others) {
      if (memoryBytes.get() <= memoryBound) {
        return;
      }
      long more = other.spill();
      memoryBytes.addAndGet(-more);
      spilledBytes.addAndGet(more);
    }
  }

  /** Ends {@code output}: from now on it may be read. Answers its bytes per partition. */
  public long[] commit(StoredMapOutput output) {
    return output.commit();
  }

  /** Drops an output that was never committed (a failed map attempt). */
  public void discard(StoredMapOutput output) {
    Map<Long, StoredMapOutput> maps = shuffles.get(output.shuffleId());
    if (maps != null) {
      maps.remove(output.mapId(), output);
    }
    memoryBytes.addAndGet(-output.close());
  }

  /** The committed output of map {@code mapId}, or null. */
  public StoredMapOutput committed(int shuffleId, long mapId) {
    Map<Long, StoredMapOutput> maps = shuffles.get(shuffleId);
    StoredMapOutput output = maps == null ? null : maps.get(mapId);
    return output != null && output.isCommitted() ? output : null;
  }

  /** Every batch of {@code partition} of the committed maps, map by map, in order; NOT_FOUND names missing maps. */
  public List<ArrowRecordBatch> read(int shuffleId, int partition, long[] mapIds, BufferAllocator readAllocator) {
    List<StoredMapOutput> outputs = new ArrayList<>(mapIds.length);
    List<Long> missing = new ArrayList<>();
    for (long mapId : mapIds) {
      StoredMapOutput output = committed(shuffleId, mapId);
      if (output == null) {
        missing.add(mapId);
      } else {
        outputs.add(output);
      }
    }
    if (!missing.isEmpty()) {
      throw ThallusException.of(StatusCode.NOT_FOUND, "maps " + missing + " of shuffle " + shuffleId
          + " have no committed output on this endpoint");
    }
    List<ArrowRecordBatch> batches = new ArrayList<>();
    try {
      for (StoredMapOutput output : outputs) {
        batches.addAll(output.read(partition, readAllocator));
      }
    } catch (RuntimeException e) {
      batches.forEach(ArrowRecordBatch::close);
      throw e;
    }
    return batches;
  }

  /** Frees the shuffle's outputs and deletes its spill files. */
  public void remove(int shuffleId) {
    Map<Long, StoredMapOutput> maps = shuffles.remove(shuffleId);
    if (maps != null) {
      maps.values().forEach(output -> memoryBytes.addAndGet(-output.close()));
    }
    deleteFolder(spillFolder.resolve("shuffle-" + shuffleId));
  }

  public long memoryBytes() {
    return memoryBytes.get();
  }

  public long spilledBytes() {
    return spilledBytes.get();
  }

  private static void deleteFolder(Path folder) {
    if (!Files.isDirectory(folder)) {
      return;
    }
    try (Stream<Path> files = Files.walk(folder)) {
      for (Path path : files.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(path);
      }
    } catch (IOException e) {
      throw ThallusException.of(StatusCode.INTERNAL, "cannot delete the spill folder " + folder + ": " + e, e);
    }
  }

  @Override
  public void close() {
    for (Integer shuffleId : List.copyOf(shuffles.keySet())) {
      remove(shuffleId);
    }
  }
}
