package io.thallus.spark.shuffle;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;
import org.apache.spark.SparkConf;

/** Which {@link ShuffleStore} an executor's shuffle manager keeps the exchange's batches in ({@link ShuffleOptions#STORE}). */
enum ShuffleStoreKind {
  /** Spark's own shuffle files and block transfer ({@link SparkBlockStore}): the default. */
  SPARK,
  /** A Thallus exchange endpoint per executor, reducers pulling over Thallus transports ({@link ExchangeStore}). */
  EXCHANGE;

  /** The store {@code conf} names, read once when the manager is made; an unknown name fails naming the key. */
  static ShuffleStoreKind of(SparkConf conf) {
    String value = conf.get(ShuffleOptions.STORE, "spark").trim();
    for (ShuffleStoreKind kind : values()) {
      if (kind.name().equalsIgnoreCase(value)) {
        return kind;
      }
    }
    throw new IllegalArgumentException(ShuffleOptions.STORE + " must be one of "
        + Arrays.stream(values()).map(k -> k.name().toLowerCase(Locale.ROOT)).collect(Collectors.joining(", "))
        + ", not '" + value + "'");
  }
}
