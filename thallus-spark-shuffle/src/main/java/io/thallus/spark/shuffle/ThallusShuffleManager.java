package io.thallus.spark.shuffle;

import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext$;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.shuffle.IndexShuffleBlockResolver;
import org.apache.spark.shuffle.ShuffleBlockResolver;
import org.apache.spark.shuffle.ShuffleHandle;
import org.apache.spark.shuffle.ShuffleManager;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.ShuffleReader;
import org.apache.spark.shuffle.ShuffleWriteMetricsReporter;
import org.apache.spark.shuffle.ShuffleWriter;
import org.apache.spark.shuffle.sort.SortShuffleManager;

/**
 * Spark's shuffle manager with the Thallus exchange's shuffles added: it serves the shuffles of the Thallus exchange
 * (Arrow batches, {@link ShuffleOptions}) and hands every other shuffle to the {@link SortShuffleManager} it holds.
 * The exchange's batches go to the store {@link ShuffleOptions#STORE} names: Spark's block storage (the default, so
 * Spark's block manager serves and cleans both kinds of shuffle) or a Thallus exchange endpoint per executor.
 *
 * <pre>{@code
 * spark.shuffle.manager = io.thallus.spark.shuffle.ThallusShuffleManager
 * spark.sql.extensions  = io.thallus.spark.shuffle.ThallusShuffleExtensions
 * }</pre>
 */
public final class ThallusShuffleManager implements ShuffleManager {
  private final SortShuffleManager sort;
  private final ShuffleStore store;
  /** The map outputs this executor wrote, by shuffle: what unregisterShuffle removes. */
  private final Map<Integer, Set<Long>> mapOutputs = new ConcurrentHashMap<>();
  /** On the driver with {@code store=exchange}: the executors' endpoints, for push targets; null otherwise. */
  private final ExchangeDirectory directory;

  /**
   * Made by Spark's SparkEnv on the driver and on each executor. On the driver SparkEnv is already set when Spark
   * makes its shuffle manager, before any executor registers, so the exchange directory is up before executors ask.
   */
  public ThallusShuffleManager(SparkConf conf) {
    this.sort = new SortShuffleManager(conf);
    SparkEnv env = SparkEnv.get();
    boolean driver = env != null && SparkContext$.MODULE$.DRIVER_IDENTIFIER().equals(env.executorId());
    ShuffleStoreKind kind = ShuffleStoreKind.of(conf);
    this.store = switch (kind) {
      case SPARK -> new SparkBlockStore(conf, (IndexShuffleBlockResolver) sort.shuffleBlockResolver());
      case EXCHANGE -> new ExchangeStore(conf, !driver);
    };
    this.directory = kind == ShuffleStoreKind.EXCHANGE && driver
        ? ExchangeDirectory.start(env.rpcEnv(), RegistrationCheck.of(env)) : null;
  }

  /** On the driver with {@code store=exchange}: where the executors' endpoints are registered. */
  Optional<ExchangeDirectory> directory() {
    return Optional.ofNullable(directory);
  }

  @Override
  public <K, V, C> ShuffleHandle registerShuffle(int shuffleId, ShuffleDependency<K, V, C> dependency) {
    if (dependency instanceof ArrowShuffleDependency arrow) {
      return new ThallusShuffleHandle(shuffleId, arrow);
    }
    return sort.registerShuffle(shuffleId, dependency);
  }

  @Override
  @SuppressWarnings("unchecked")
  public <K, V> ShuffleWriter<K, V> getWriter(ShuffleHandle handle, long mapId, TaskContext context,
      ShuffleWriteMetricsReporter metrics) {
    if (handle instanceof ThallusShuffleHandle thallus) {
      mapOutputs.computeIfAbsent(handle.shuffleId(), id -> ConcurrentHashMap.newKeySet()).add(mapId);
      return (ShuffleWriter<K, V>) (ShuffleWriter<?, ?>) new ArrowShuffleWriter(thallus, mapId, context, metrics,
          store);
    }
    return sort.getWriter(handle, mapId, context, metrics);
  }

  @Override
  @SuppressWarnings("unchecked")
  public <K, C> ShuffleReader<K, C> getReader(ShuffleHandle handle, int startMapIndex, int endMapIndex,
      int startPartition, int endPartition, TaskContext context, ShuffleReadMetricsReporter metrics) {
    if (handle instanceof ThallusShuffleHandle thallus) {
      return (ShuffleReader<K, C>) (ShuffleReader<?, ?>) new ArrowShuffleReader(thallus, startMapIndex, endMapIndex,
          startPartition, endPartition, context, metrics, store);
    }
    return sort.getReader(handle, startMapIndex, endMapIndex, startPartition, endPartition, context, metrics);
  }

  @Override
  public boolean unregisterShuffle(int shuffleId) {
    Set<Long> maps = mapOutputs.remove(shuffleId);
    store.removeShuffle(shuffleId, maps == null ? Set.of() : maps);
    return sort.unregisterShuffle(shuffleId);
  }

  @Override
  public ShuffleBlockResolver shuffleBlockResolver() {
    return sort.shuffleBlockResolver();
  }

  @Override
  public void stop() {
    if (directory != null) {
      directory.shutdown();
    }
    store.close();
    sort.stop();
  }
}
