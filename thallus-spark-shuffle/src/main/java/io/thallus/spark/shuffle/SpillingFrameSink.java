package io.thallus.spark.shuffle;

import java.io.File;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.executor.TaskMetrics;
import org.apache.spark.memory.MemoryConsumer;
import org.apache.spark.memory.MemoryMode;
import org.apache.spark.serializer.SerializerManager;
import org.apache.spark.shuffle.api.ShuffleExecutorComponents;
import org.apache.spark.shuffle.api.ShuffleMapOutputWriter;
import org.apache.spark.shuffle.api.ShufflePartitionWriter;
import org.apache.spark.storage.DiskBlockManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One map task's frames on their way into Spark's shuffle files, with a bounded heap: frames collect in one buffer
 * per reduce partition, and when they would hold more than Spark's memory manager grants the task (or more than
 * {@link ShuffleOptions#SPILL_THRESHOLD}), every buffer goes to a temporary file in the executor's local dirs (a
 * <em>spill run</em>: the partitions' frames in partition order) and the buffers start again. At commit each
 * partition's frames are copied out of every run in order, then out of memory, into Spark's map output writer:
 * frames are independent, so a partition's run of frames may be assembled from pieces.
 *
 * <p>It is a {@link MemoryConsumer} of the task (on the heap, where the buffers are), so Spark's execution memory
 * counts the buffers beside the task's sorts, aggregations and joins, and another consumer of the task that needs
 * memory can make it spill. Spill files are removed when the sink closes, after a commit, a failure or a kill (the
 * writer closes the sink in every case); Spark's spill metrics ({@code memoryBytesSpilled}, {@code
 * diskBytesSpilled}) count what went to disk.
 */
final class SpillingFrameSink extends MemoryConsumer implements ShuffleStore.MapOutputSink {
  private static final Logger LOG = LoggerFactory.getLogger(SpillingFrameSink.class);
  private static final int FIRST_BUFFER_BYTES = 1 << 12;
  private static final int COPY_BUFFER_BYTES = 1 << 16;
  /**
   * A buffer past this spills whatever the grant: a byte array stops short of 2 GiB, and the next frame (at most
   * {@link BatchFrames#MAX_RAW_LENGTH} and its codec's bound) still fits in what is left.
   */
  private static final int BUFFER_SPILL_BYTES = 1 << 30;

  private final ShuffleExecutorComponents components;
  private final DiskBlockManager localDirs;
  private final SerializerManager serializers;
  private final int shuffleId;
  private final long mapId;
  private final long threshold;
  private final long floor;
  private final TaskMetrics taskMetrics;
  private final BatchFrames.Encoder encoder;
  private final GrowableBytes[] partitionFrames;
  private final List<SpillRun> runs = new ArrayList<>();
  /** Bytes the partition buffers take on the heap (their capacities), against {@link #granted}. */
  private long held;
  /** Bytes Spark's memory manager has granted this sink. */
  private long granted;
  private long rawBytes;
  private long encodeNanos;
  private boolean closed;

  /**
   * @param components Spark's map output writers (the executor's, made once)
   * @param threshold the most bytes the buffers may take before they spill, even where Spark would grant more
   * @param floor the bytes below which the buffers do not spill for want of memory (Spark's
   *     {@code spark.shuffle.spill.initialMemoryThreshold}, which its own spillable collections hold before they
   *     may spill): so that a task short of memory writes runs of a useful size, not one file per frame
   */
  SpillingFrameSink(TaskContext task, ShuffleExecutorComponents components, int shuffleId, long mapId,
      ExchangeLayout layout, long threshold, long floor) {
    super(task.taskMemoryManager(), MemoryMode.ON_HEAP);
    this.components = components;
    this.localDirs = SparkEnv.get().blockManager().diskBlockManager();
    this.serializers = SparkEnv.get().serializerManager();
    this.shuffleId = shuffleId;
    this.mapId = mapId;
    this.threshold = threshold;
    this.floor = floor;
    this.taskMetrics = task.taskMetrics();
    this.encoder = new BatchFrames.Encoder(layout.codec());
    this.partitionFrames = new GrowableBytes[layout.partitions()];
  }

  @Override
  public void add(int partition, VectorSchemaRoot batch) throws IOException {
    checkOpen();
    GrowableBytes frames = partitionFrames[partition];
    if (frames == null) {
      frames = partitionFrames[partition] = new GrowableBytes(FIRST_BUFFER_BYTES);
      held += frames.capacity();
    }
    long started = System.nanoTime();
    int before = frames.capacity();
    rawBytes += encoder.encode(batch, frames);
    held += frames.capacity() - before;
    encodeNanos += System.nanoTime() - started;
    if (frames.size() > BUFFER_SPILL_BYTES) {
      spillToDisk();
    } else {
      boundHeap();
    }
  }

  /**
   * Keeps the buffers within what Spark grants and within the threshold: asks for more memory as they grow (as
   * Spark's own spillable collections do: the buffers grow first, then the grant catches up, so they pass it by at
   * most one buffer's growth), and spills them all when the threshold is passed, or the grant is passed and they
   * hold more than the floor.
   */
  private void boundHeap() throws IOException {
    if (held > granted && held <= threshold) {
      // Twice what is held, as Spark's Spillable asks, so that a growing map task asks the manager rarely.
      long wanted = Math.min(threshold, 2 * held) - granted;
      granted += acquireMemory(wanted);
    }
    if (held > threshold || (held > granted && held > floor)) {
      spillToDisk();
    }
  }

  /**
   * Called by Spark's memory manager when another consumer of this task needs memory. A request of this sink's own
   * ({@link #boundHeap}) is answered there, after the grant: the sink is then between two frames. Buffers below
   * the floor stay (the other consumer then gets less, and spills itself).
   */
  @Override
  public long spill(long size, MemoryConsumer trigger) throws IOException {
    if (trigger == this || closed || held == 0 || held <= floor) {
      return 0;
    }
    long freed = granted;
    spillToDisk();
    return freed;
  }

  /** Writes every buffer, in partition order, into a new spill run; frees the buffers and the grant. */
  private void spillToDisk() throws IOException {
    long[] lengths = new long[partitionFrames.length];
    boolean any = false;
    for (int partition = 0; partition < partitionFrames.length; partition++) {
      GrowableBytes frames = partitionFrames[partition];
      if (frames != null && frames.size() > 0) {
        lengths[partition] = frames.size();
        any = true;
      }
    }
    if (any) {
      // Spark's own name for a shuffle's temporary files (temp_shuffle_<uuid>), in its local dirs.
      File file = localDirs.createTempShuffleBlock()._2();
      // Known to close() before it is written, so that a failure while writing still removes it.
      SpillRun run = new SpillRun(file, lengths);
      runs.add(run);
      try (OutputStream out = serializers.wrapForEncryption(new FileOutputStream(file))) {
        for (GrowableBytes frames : partitionFrames) {
          if (frames != null) {
            frames.writeTo(out);
          }
        }
      }
      taskMetrics.incMemoryBytesSpilled(held);
      taskMetrics.incDiskBytesSpilled(file.length());
      LOG.info("Shuffle {} map {}: spilled {} bytes of frames ({} held, {} granted) to {}, run {}", shuffleId, mapId,
          file.length(), held, granted, file.getName(), runs.size());
    }
    java.util.Arrays.fill(partitionFrames, null);
    held = 0;
    freeMemory(granted);
    granted = 0;
  }

  @Override
  public long[] commit() throws IOException {
    checkOpen();
    ShuffleMapOutputWriter writer = components.createMapOutputWriter(shuffleId, mapId,
        partitionFrames.length);
    List<InputStream> runInputs = new ArrayList<>();
    try {
      for (SpillRun run : runs) {
        runInputs.add(serializers.wrapForEncryption(new FileInputStream(run.file)));
      }
      byte[] copyBuffer = runs.isEmpty() ? null : new byte[COPY_BUFFER_BYTES];
      for (int partition = 0; partition < partitionFrames.length; partition++) {
        if (!hasFrames(partition)) {
          continue;
        }
        ShufflePartitionWriter partitionWriter = writer.getPartitionWriter(partition);
        try (OutputStream out = serializers.wrapForEncryption(partitionWriter.openStream())) {
          // The runs are read front to back, one partition after another, as they were written.
          for (int r = 0; r < runs.size(); r++) {
            copy(runInputs.get(r), runs.get(r).lengths[partition], out, copyBuffer, runs.get(r).file);
          }
          GrowableBytes frames = partitionFrames[partition];
          if (frames != null) {
            frames.writeTo(out);
          }
        }
      }
      // No checksums: Spark's checksum files describe its own serialized streams, used to diagnose corruption.
      return writer.commitAllPartitions(new long[0]).getPartitionLengths();
    } catch (IOException | RuntimeException e) {
      try {
        writer.abort(e);
      } catch (IOException | RuntimeException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    } finally {
      for (InputStream in : runInputs) {
        try {
          in.close();
        } catch (IOException ignored) {
          // Read-only; the file is deleted on close().
        }
      }
    }
  }

  private boolean hasFrames(int partition) {
    GrowableBytes frames = partitionFrames[partition];
    if (frames != null && frames.size() > 0) {
      return true;
    }
    for (SpillRun run : runs) {
      if (run.lengths[partition] > 0) {
        return true;
      }
    }
    return false;
  }

  private static void copy(InputStream in, long length, OutputStream out, byte[] buffer, File from)
      throws IOException {
    long left = length;
    while (left > 0) {
      int read = in.read(buffer, 0, (int) Math.min(buffer.length, left));
      if (read < 0) {
        throw new IOException("Spill file " + from + " ended " + left + " bytes early");
      }
      out.write(buffer, 0, read);
      left -= read;
    }
  }

  /** Spill runs written so far (for tests and the task's log). */
  int spillRuns() {
    return runs.size();
  }

  @Override
  public long rawBytes() {
    return rawBytes;
  }

  @Override
  public long encodeNanos() {
    return encodeNanos;
  }

  /** Removes the spill files and gives the memory back; idempotent. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    java.util.Arrays.fill(partitionFrames, null);
    held = 0;
    freeMemory(granted);
    granted = 0;
    for (SpillRun run : runs) {
      try {
        Files.deleteIfExists(run.file.toPath());
      } catch (IOException e) {
        // Spark removes its local dirs when the executor stops; nothing else reads this file.
        LOG.warn("Could not remove spill file {}", run.file, e);
      }
    }
    runs.clear();
  }

  private void checkOpen() {
    if (closed) {
      throw new IllegalStateException("the map output of shuffle " + shuffleId + ", map " + mapId + " is closed");
    }
  }

  /** One spill file: each partition's frames, partitions in order, and how many bytes each partition has there. */
  private record SpillRun(File file, long[] lengths) {}
}
