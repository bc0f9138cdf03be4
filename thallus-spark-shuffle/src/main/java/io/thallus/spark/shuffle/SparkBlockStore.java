package io.thallus.spark.shuffle;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Iterator;
import java.util.Map;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.shuffle.IndexShuffleBlockResolver;
import org.apache.spark.shuffle.ShuffleDataIOUtils;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.api.ShuffleExecutorComponents;
import org.apache.spark.shuffle.api.ShuffleMapOutputWriter;
import org.apache.spark.shuffle.api.ShufflePartitionWriter;
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
 * own shuffle.
 */
final class SparkBlockStore implements ShuffleStore {
  private final SparkConf conf;
  private final IndexShuffleBlockResolver resolver;
  private volatile ShuffleExecutorComponents components;

  SparkBlockStore(SparkConf conf, IndexShuffleBlockResolver resolver) {
    this.conf = conf;
    this.resolver = resolver;
  }

  @Override
  public long[] writeMapOutput(int shuffleId, long mapId, GrowableBytes[] partitionFrames) throws IOException {
    ShuffleMapOutputWriter writer = components().createMapOutputWriter(shuffleId, mapId, partitionFrames.length);
    try {
      for (int partition = 0; partition < partitionFrames.length; partition++) {
        GrowableBytes frames = partitionFrames[partition];
        if (frames == null || frames.size() == 0) {
          continue;
        }
        ShufflePartitionWriter partitionWriter = writer.getPartitionWriter(partition);
        try (OutputStream out = SparkEnv.get().serializerManager().wrapForEncryption(partitionWriter.openStream())) {
          frames.writeTo(out);
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
    }
  }

  @Override
  public Iterator<InputStream> openReduceInput(
      Iterator<Tuple2<BlockManagerId, Seq<Tuple3<BlockId, Object, Object>>>> locations,
      boolean fetchContiguousBlocksAtOnce, TaskContext context, ShuffleReadMetricsReporter metrics) {
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
    return new Iterator<>() {
      @Override
      public boolean hasNext() {
        return fetches.hasNext();
      }

      @Override
      public InputStream next() {
        return fetches.next()._2();
      }
    };
  }

  @Override
  public void removeMapOutput(int shuffleId, long mapId) {
    resolver.removeDataByMap(shuffleId, mapId);
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
