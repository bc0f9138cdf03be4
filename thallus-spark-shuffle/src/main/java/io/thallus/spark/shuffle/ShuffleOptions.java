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

  private ShuffleOptions() {}
}
