package io.thallus.spark.shuffle;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.Collection;
import java.util.Iterator;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.shuffle.IndexShuffleBlockResolver;
import org.apache.spark.shuffle.ShuffleDataIOUtils;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.api.ShuffleExecutorComponents;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.BlockManager;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.storage.ShuffleBlockFetcherIterator;
import org.apache.spark.util.SystemClock;
import scala.Tuple2;
import scala.Tuple3;
import scala.collection.Seq;
import scala.runtime.AbstractFunction2;

/**
 * The store on Spark's own block storage: a map task's frames go into the executor's shuffle data and index files
 * (through Spark's ShuffleExecutorComponents, as the sort shuffle writes them), and reducers fetch them with
 * Spark's ShuffleBlockFetcherIterator. So MapStatus points at the executor's block manager, and fetch retries,
 * FetchFailedException, recomputation of lost output, the external shuffle service and cleanup work as for Spark's
 * own shuffle. A map task's frames stay on the heap within what Spark's memory manager grants it and spill to the
 * executor's local dirs beyond ({@link SpillingFrameSink}).
 */
final class SparkBlockStore implements ShuffleStore {
  private final SparkConf conf;
  private final IndexShuffleBlockResolver resolver;
  private final long spillThreshold;
  private final long spillFloor;
  private volatile ShuffleExecutorComponents components;

  SparkBlockStore(SparkConf conf, IndexShuffleBlockResolver resolver) {
    this.conf = conf;
    this.resolver = resolver;
    this.spillThreshold = spillThreshold(conf);
    // Spark's own (5m by default): what its spillable collections hold before they may spill for want of memory.
    this.spillFloor = conf.getSizeAsBytes("spark.shuffle.spill.initialMemoryThreshold", "5m");
  }

  /**
   * {@link ShuffleOptions#SPILL_THRESHOLD}: the most bytes of frames a map task keeps on the heap, below what Spark's
   * memory manager grants it; unset, the grant alone bounds it.
   */
  static long spillThreshold(SparkConf conf) {
    if (!conf.contains(ShuffleOptions.SPILL_THRESHOLD)) {
      return Long.MAX_VALUE;
    }
    String value = conf.get(ShuffleOptions.SPILL_THRESHOLD).trim();
    long bytes;
    try {
      bytes = conf.getSizeAsBytes(ShuffleOptions.SPILL_THRESHOLD);
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(ShuffleOptions.SPILL_THRESHOLD + " must be a size such as 64m, not '"
          + value + "'", e);
    }
    if (bytes < 1 << 10) {
      throw new IllegalArgumentException(ShuffleOptions.SPILL_THRESHOLD + " must be at least 1k, not " + bytes
          + " bytes");
    }
    return bytes;
  }

  @Override
  public MapOutputSink openMapOutput(int shuffleId, long mapId, ExchangeLayout layout) {
    TaskContext task = TaskContext.get();
    if (task == null) {
      throw new IllegalStateException("a map output of shuffle " + shuffleId + " is written outside a Spark task");
    }
    return new SpillingFrameSink(task, components(), shuffleId, mapId, layout, spillThreshold, spillFloor);
  }

  @Override
  public BatchSource openReduceInput(
      Iterator<Tuple2<BlockManagerId, Seq<Tuple3<BlockId, Object, Object>>>> locations,
      boolean fetchContiguousBlocksAtOnce, ExchangeLayout layout, BufferAllocator allocator, TaskContext context,
      ShuffleReadMetricsReporter metrics) {
    BlockManager blockManager = SparkEnv.get().blockManager();
    boolean encrypted = SparkEnv.get().securityManager().ioEncryptionKey().isDefined();
    ShuffleBlockFetcherIterator fetches = new ShuffleBlockFetcherIterator(
        context,
        blockManager.blockStoreClient(),
        blockManager,
        SparkEnv.get().mapOutputTracker(),
        scala.jdk.javaapi.CollectionConverters.asScala(locations),
        new Decryption(),
        conf.getSizeAsBytes("spark.reducer.maxSizeInFlight", "48m"),
        conf.getInt("spark.reducer.maxReqsInFlight", Integer.MAX_VALUE),
        conf.getInt("spark.reducer.maxBlocksInFlightPerAddress", Integer.MAX_VALUE),
        conf.getSizeAsBytes("spark.network.maxRemoteBlockSizeFetchToMem", "200m"),
        conf.getInt("spark.network.shuffle.maxAttemptsOnNettyOOM", 10),
        // As Spark's reader: an IOException while a fetched stream is read becomes a FetchFailedException (Spark
        // then recomputes the map output). Its eager check reads through our wrapper only (decryption), never a codec.
        conf.getBoolean("spark.shuffle.detectCorrupt", true),
        conf.getBoolean("spark.shuffle.detectCorrupt.useExtraMemory", false),
        // Spark's checksums describe its own serialized streams; frames carry their own lengths.
        false,
        "ADLER32",
        metrics,
        fetchContiguousBlocksAtOnce && !encrypted,
        new SystemClock());
    return new FrameSource(fetches, layout, allocator);
  }

  @Override
  public BlockManagerId location() {
    return SparkEnv.get().blockManager().shuffleServerId();
  }

  @Override
  public void removeShuffle(int shuffleId, Collection<Long> mapIds) {
    mapIds.forEach(mapId -> resolver.removeDataByMap(shuffleId, mapId));
  }

  @Override
  public void close() {
    // Spark's block manager owns the files.
  }

  /** Decodes the frames of fetched blocks, one block after another, into one root. */
  private static final class FrameSource implements BatchSource {
    private final ShuffleBlockFetcherIterator fetches;
    private final BatchFrames.Decoder decoder;
    private final VectorSchemaRoot root;
    private final VectorLoader loader;
    private DataInputStream current;

    FrameSource(ShuffleBlockFetcherIterator fetches, ExchangeLayout layout, BufferAllocator allocator) {
      this.fetches = fetches;
      this.decoder = new BatchFrames.Decoder(allocator);
      this.root = VectorSchemaRoot.create(layout.arrowSchema(), allocator);
      this.loader = new VectorLoader(root);
    }

    @Override
    public VectorSchemaRoot next() throws IOException {
      while (true) {
        if (current == null) {
          if (!fetches.hasNext()) {
            return null;
          }
          current = BatchFrames.Decoder.buffered(fetches.next()._2());
        }
        ArrowRecordBatch batch = decoder.next(current);
        if (batch == null) {
          current.close();
          current = null;
          continue;
        }
        try (batch) {
          loader.load(batch);
        }
        return root;
      }
    }

    @Override
    public void close() {
      try {
        if (current != null) {
          current.close();
        }
      } catch (IOException ignored) {
        // The fetcher releases its buffers at the task's end as well.
      }
      root.close();
    }
  }

  /** Spark's executor components (local disk unless spark.shuffle.sort.io.plugin.class names another), made once. */
  private ShuffleExecutorComponents components() {
    ShuffleExecutorComponents made = components;
    if (made == null) {
      synchronized (this) {
        made = components;
        if (made == null) {
          made = ShuffleDataIOUtils.loadShuffleDataIO(conf).executor();
          made.initializeExecutor(conf.getAppId(), SparkEnv.get().executorId(), Map.of());
          components = made;
        }
      }
    }
    return made;
  }

  /** Fetched blocks are decrypted where Spark encrypts shuffle files (spark.io.encryption.enabled). */
  private static final class Decryption extends AbstractFunction2<BlockId, InputStream, InputStream> {
    @Override
    public InputStream apply(BlockId block, InputStream in) {
      return SparkEnv.get().serializerManager().wrapForEncryption(in);
    }
  }
}
