package io.thallus.spark.shuffle;

import io.thallus.BatchCompression;
import java.util.Locale;

/**
 * {@link ShuffleOptions#EXCHANGE_COMPRESSION}: how the exchange store keeps and sends map output batches. Compression
 * costs CPU on both sides and saves bytes on the wire and in memory: worth it where executors talk over tcp, not where
 * they share a host's memory (shm, cma), hence {@link #AUTO}.
 */
enum ExchangeCompression {
  /** LZ4 over tcp, none over shm and cma. */
  AUTO,
  LZ4,
  ZSTD,
  NONE;

  static ExchangeCompression of(String value) {
    String named = value.trim().toLowerCase(Locale.ROOT);
    return switch (named) {
      case "auto" -> AUTO;
      case "lz4" -> LZ4;
      case "zstd" -> ZSTD;
      case "none" -> NONE;
      default -> throw new IllegalArgumentException(ShuffleOptions.EXCHANGE_COMPRESSION
          + " must be one of auto, lz4, zstd, none, not '" + value + "'");
    };
  }

  /** The codec the endpoint uses with {@code transport} (tcp, shm or cma). */
  BatchCompression codecFor(String transport) {
    return switch (this) {
      case AUTO -> "tcp".equals(transport) ? BatchCompression.LZ4_FRAME : BatchCompression.NONE;
      case LZ4 -> BatchCompression.LZ4_FRAME;
      case ZSTD -> BatchCompression.ZSTD;
      case NONE -> BatchCompression.NONE;
    };
  }
}
