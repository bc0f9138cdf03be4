package io.thallus.spark.shuffle;

import java.time.Duration;
import org.apache.spark.network.util.JavaUtils;
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

  PushMode pushMode() {
    return PushMode.of(conf.getConfString(ShuffleOptions.EXCHANGE_PUSH, "auto"));
  }

  long pushMaxBytes() {
    String value = conf.getConfString(ShuffleOptions.EXCHANGE_PUSH_MAX_BYTES, "128m").trim();
    long bytes;
    try {
      bytes = JavaUtils.byteStringAsBytes(value);
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(ShuffleOptions.EXCHANGE_PUSH_MAX_BYTES + " must be a size such as 128m, not '"
          + value + "'");
    }
    if (bytes < 0) {
      throw new IllegalArgumentException(ShuffleOptions.EXCHANGE_PUSH_MAX_BYTES + " cannot be negative: " + value);
    }
    return bytes;
  }

  Duration pushCommitWait() {
    String value = conf.getConfString(ShuffleOptions.EXCHANGE_PUSH_COMMIT_WAIT, "30s").trim();
    long millis;
    try {
      millis = JavaUtils.timeStringAsMs(value);
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(ShuffleOptions.EXCHANGE_PUSH_COMMIT_WAIT
          + " must be a duration such as 30s or 0, not '" + value + "'");
    }
    if (millis < 0 || millis > Duration.ofMinutes(10).toMillis()) {
      throw new IllegalArgumentException(ShuffleOptions.EXCHANGE_PUSH_COMMIT_WAIT + " must be from 0 to 10min, not "
          + value);
    }
    return Duration.ofMillis(millis);
  }
}
