package io.thallus.exchange.internal;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.message.ArrowBlock;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * One map task's output on the endpoint that made it: per partition its batches in the order they were added, each
 * in memory or in the map's spill file. It stays until its shuffle is removed, whether it was pushed or not.
 */
public final class StoredMapOutput {
  /** One batch: in memory ({@code batch} set) or spilled ({@code block} set). */
  private static final class Piece {
    ArrowRecordBatch batch;
    ArrowBlock block;
    final long bytes;
    final int rows;

    Piece(ArrowRecordBatch batch) {
      this.batch = batch;
      this.bytes = Batches.bytes(batch);
      this.rows = batch.getLength();
    }
  }

  private final int shuffleId;
  private final long mapId;
  private final Schema schema;
  private final Path spillPath;
  private final List<List<Piece>> partitions;
  private final long[] partitionBytes;
  private SpillFile spill;
  private long memoryBytes;
  private boolean committed;
  private boolean closed;

  StoredMapOutput(int shuffleId, long mapId, Schema schema, int numPartitions, Path spillPath) {
    this.shuffleId = shuffleId;
    this.mapId = mapId;
    this.schema = schema;
    this.spillPath = spillPath;
    this.partitions = new ArrayList<>(numPartitions);
    for (int i = 0; i < numPartitions; i++) {
      partitions.add(new ArrayList<>());
    }
    this.partitionBytes = new long[numPartitions];
  }

  public int shuffleId() {
    return shuffleId;
  }

  public long mapId() {
    return mapId;
  }

  public Schema schema() {
    return schema;
  }

  public int numPartitions() {
    return partitions.size();
  }

  /** Takes {@code batch} (owned from now on); answers the bytes it added to memory. */
  synchronized long add(int partition, ArrowRecordBatch batch) {
    if (closed || committed) {
      batch.close();
      throw ThallusException.of(StatusCode.FAILED_PRECONDITION, "map " + mapId + " of shuffle " + shuffleId + " is "
          + (closed ? "removed" : "committed") + "; it takes no more batches");
    }
    Piece piece = new Piece(batch);
    partitions.get(partition).add(piece);
    partitionBytes[partition] += piece.bytes;
    memoryBytes += piece.bytes;
    return piece.bytes;
  }

  synchronized long[] commit() {
    committed = true;
    return partitionBytes.clone();
  }

  synchronized boolean isCommitted() {
    return committed && !closed;
  }

  synchronized long memoryBytes() {
    return memoryBytes;
  }

  synchronized boolean isSpilled() {
    return spill != null;
  }

  /** Writes every batch still in memory to the spill file and frees it; answers the bytes freed. */
  synchronized long spill() {
    if (closed || memoryBytes == 0) {
      return 0;
    }
    if (spill == null) {
      spill = new SpillFile(spillPath);
    }
    long freed = 0;
    for (List<Piece> pieces : partitions) {
      for (Piece piece : pieces) {
        if (piece.batch != null) {
          piece.block = spill.append(piece.batch);
          piece.batch.close();
          piece.batch = null;
          freed += piece.bytes;
        }
      }
    }
    memoryBytes -= freed;
    return freed;
  }

  /** The partition's batches in order, each the caller's to close: memory ones retained, spilled ones read back. */
  public List<ArrowRecordBatch> read(int partition, BufferAllocator allocator) {
    List<ArrowBlock> blocks = new ArrayList<>();
    List<ArrowRecordBatch> inMemory = new ArrayList<>();
    List<Boolean> order = new ArrayList<>();
    SpillFile file;
    synchronized (this) {
      if (closed) {
        throw ThallusException.of(StatusCode.NOT_FOUND, "map " + mapId + " of shuffle " + shuffleId + " was removed");
      }
      checkPartition(partition);
      for (Piece piece : partitions.get(partition)) {
        if (piece.batch != null) {
          inMemory.add(Batches.retain(piece.batch));
          order.add(true);
        } else {
          blocks.add(piece.block);
          order.add(false);
        }
      }
      file = spill;
    }
    List<ArrowRecordBatch> answer = new ArrayList<>(order.size());
    int memoryIndex = 0;
    int blockIndex = 0;
    try {
      for (boolean fromMemory : order) {
        answer.add(fromMemory ? inMemory.get(memoryIndex++) : file.read(blocks.get(blockIndex++), allocator));
      }
    } catch (RuntimeException e) {
      answer.forEach(ArrowRecordBatch::close);
      inMemory.subList(memoryIndex, inMemory.size()).forEach(ArrowRecordBatch::close);
      throw e;
    }
    return answer;
  }

  synchronized long partitionBytes(int partition) {
    checkPartition(partition);
    return partitionBytes[partition];
  }

  private void checkPartition(int partition) {
    if (partition < 0 || partition >= partitions.size()) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "partition " + partition + " is not one of map " + mapId
          + "'s " + partitions.size() + " partitions");
    }
  }

  /** Frees the memory and deletes the spill file; answers the memory bytes freed. */
  synchronized long close() {
    if (closed) {
      return 0;
    }
    closed = true;
    for (List<Piece> pieces : partitions) {
      for (Piece piece : pieces) {
        if (piece.batch != null) {
          piece.batch.close();
        }
      }
      pieces.clear();
    }
    if (spill != null) {
      spill.close();
    }
    long freed = memoryBytes;
    memoryBytes = 0;
    return freed;
  }
}
