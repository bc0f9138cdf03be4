package io.thallus.spark.shuffle;

import org.apache.spark.sql.internal.SQLConf;

/** The typed values of {@link ShuffleOptions} for one session, checked where they are read. */
final class ShuffleConf {
  private final SQLConf conf;

  ShuffleConf(SQLConf conf) {
    this.conf = conf;
  }

  boolean enabled() {
    String value = conf.getConfString(ShuffleOptions.ENABLED, "true").trim();
    if (!value.equalsIgnoreCase("true") && !value.equalsIgnoreCase("false")) {
      throw new IllegalArgumentException(ShuffleOptions.ENABLED + " must be true or false, not '" + value + "'");
    }
    return Boolean.parseBoolean(value);
  }

  FrameCodec codec() {
    return FrameCodec.named(conf.getConfString(ShuffleOptions.CODEC, "lz4"));
  }

  int batchRows() {
    String value = conf.getConfString(ShuffleOptions.BATCH_ROWS, "8192").trim();
    int rows;
    try {
      rows = Integer.parseInt(value);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(ShuffleOptions.BATCH_ROWS + " must be a whole number, not '" + value + "'");
    }
    if (rows < 64 || rows > 1 << 20) {
      throw new IllegalArgumentException(ShuffleOptions.BATCH_ROWS + " must be from 64 to 1048576, not " + rows);
    }
    return rows;
  }
}
