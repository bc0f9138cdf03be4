package io.thallus.spark.shuffle;

/**
 * The configuration keys of the Thallus exchange, so that they can be named in code. Turning it on takes two of
 * Spark's own keys:
 *
 * <pre>{@code
 * spark.shuffle.manager = io.thallus.spark.shuffle.ThallusShuffleManager
 * spark.sql.extensions  = io.thallus.spark.shuffle.ThallusShuffleExtensions
 * }</pre>
 *
 * The keys below tune it; every one has a default. See docs/shuffle.md.
 */
public final class ShuffleOptions {
  /** {@code true} (default) or {@code false}: whether the planner puts the Thallus exchange in Spark's place. */
  public static final String ENABLED = "spark.thallus.shuffle.enabled";
  /** How each batch is compressed on the way: {@code lz4} (default), {@code zstd} or {@code none}. */
  public static final String CODEC = "spark.thallus.shuffle.codec";
  /** The most rows a map task puts in one batch for one reduce partition (default 8192, 64 to 1048576). */
  public static final String BATCH_ROWS = "spark.thallus.shuffle.batchRows";

  /**
   * With {@code store=spark}: the most bytes of compressed frames one map task keeps on the heap before it spills
   * them to the executor's local dirs (a size, such as {@code 64m}; at least {@code 1k}; executor-wide). Unset, the
   * bound is what Spark's memory manager grants the task (its execution memory).
   */
  public static final String SPILL_THRESHOLD = "spark.thallus.shuffle.spill.threshold";

  /**
   * Where map outputs are kept and how reducers get them (executor-wide, read when the executor starts): {@code spark}
   * (default: Spark's shuffle files and block transfer) or {@code exchange} (a Thallus exchange endpoint per
   * executor; reducers pull over a Thallus transport).
   */
  public static final String STORE = "spark.thallus.shuffle.store";
  /**
   * With {@code store=exchange}: the transport reducers pull over, {@code tcp} (default, any hosts) or {@code shm} /
   * {@code cma} (every executor on one host).
   */
  public static final String EXCHANGE_TRANSPORT = "spark.thallus.shuffle.exchange.transport";
  /**
   * With {@code store=exchange} (executor-wide): how the endpoint keeps and sends map output batches, {@code auto}
   * (default: {@code lz4} when the exchange transport is tcp, {@code none} for shm and cma, where compressing costs
   * CPU for nothing), {@code lz4}, {@code zstd} or {@code none}. Compressed batches are what Spark's shuffle-write
   * metrics and MapStatus sizes count.
   */
  public static final String EXCHANGE_COMPRESSION = "spark.thallus.shuffle.exchange.compression";
  /** With {@code store=exchange}: map output an executor keeps in memory before it spills to local disk (256m). */
  public static final String EXCHANGE_MEMORY = "spark.thallus.shuffle.exchange.memory";

  /**
   * With {@code store=exchange}, per session: whether map tasks push each reduce partition's batches to the executor
   * that will reduce it, {@code auto} (default: when the shuffle's estimated size is at most
   * {@link #EXCHANGE_PUSH_MAX_BYTES}), {@code on} or {@code off}. Reducers pull whatever was not pushed.
   */
  public static final String EXCHANGE_PUSH = "spark.thallus.shuffle.exchange.push";
  /** With {@code push=auto}: the largest shuffle (Spark's size estimate of its input) that is pushed (128m). */
  public static final String EXCHANGE_PUSH_MAX_BYTES = "spark.thallus.shuffle.exchange.pushMaxBytes";
  /**
   * With push: how long a map task's commit waits for its pushes to land (default {@code 30s}; {@code 0} does not
   * wait), so that the reducers, which start when the map stage ends, find them.
   */
  public static final String EXCHANGE_PUSH_COMMIT_WAIT = "spark.thallus.shuffle.exchange.pushCommitWait";

  private ShuffleOptions() {}
}
