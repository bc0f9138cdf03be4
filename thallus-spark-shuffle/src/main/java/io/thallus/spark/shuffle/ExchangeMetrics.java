package io.thallus.spark.shuffle;

import java.io.Serializable;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.spark.SparkContext;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.execution.metric.SQLMetrics;

/**
 * The exchange's own metrics, beside Spark's shuffle read and write metrics: the Arrow data size (AQE's statistics)
 * and where a shuffle's time goes (rows into Arrow, frames encoded, frames decoded), so that a slow exchange can be
 * taken apart. They travel to the tasks in the shuffle dependency; Spark sums them per exchange in the SQL UI.
 */
final class ExchangeMetrics implements Serializable {
  private static final long serialVersionUID = 1L;
  static final String DATA_SIZE = "dataSize";

  final SQLMetric dataSize;
  /** Map side: finding each row's partition and appending it to that partition's Arrow batch. */
  final SQLMetric convertTime;
  /** Map side: serializing full batches to Arrow messages and compressing them into frames. */
  final SQLMetric encodeTime;
  /** Reduce side: decompressing frames and loading them into the reduce task's Arrow batch. */
  final SQLMetric decodeTime;
  /** Exchange store: pushes (chunks of one map's partitions for one peer) that map tasks sent. */
  final SQLMetric pushes;
  /** Exchange store: BATCH frames (bodies) those pushes carry, one per push with rows. */
  final SQLMetric pushFrames;
  /** Exchange store: the time map tasks' commits waited for their pushes to land. */
  final SQLMetric pushWaitTime;
  /** Exchange store: pull requests that reduce tasks sent to peers (one per peer and reduce partition at most). */
  final SQLMetric pullRequests;
  /** Exchange store: batches (BATCH frames, one body each) that reduce tasks' pulls received. */
  final SQLMetric pulledBatches;
  /** Exchange store: batches that reduce tasks read from what peers pushed to them. */
  final SQLMetric pushedBatchesRead;

  ExchangeMetrics(SparkContext context) {
    dataSize = SQLMetrics.createSizeMetric(context, "data size (Arrow)", -1L);
    convertTime = SQLMetrics.createNanoTimingMetric(context, "thallus map: rows to Arrow", -1L);
    encodeTime = SQLMetrics.createNanoTimingMetric(context, "thallus map: encode and compress", -1L);
    decodeTime = SQLMetrics.createNanoTimingMetric(context, "thallus reduce: decompress and decode", -1L);
    pushes = SQLMetrics.createMetric(context, "thallus exchange: pushes sent");
    pushFrames = SQLMetrics.createMetric(context, "thallus exchange: push frames sent");
    pushWaitTime = SQLMetrics.createNanoTimingMetric(context, "thallus push: commit waiting for pushes", -1L);
    pullRequests = SQLMetrics.createMetric(context, "thallus exchange: pull requests");
    pulledBatches = SQLMetrics.createMetric(context, "thallus exchange: batches pulled");
    pushedBatchesRead = SQLMetrics.createMetric(context, "thallus exchange: pushed batches read");
  }

  Map<String, SQLMetric> byName() {
    Map<String, SQLMetric> metrics = new LinkedHashMap<>();
    metrics.put(DATA_SIZE, dataSize);
    metrics.put("convertTime", convertTime);
    metrics.put("encodeTime", encodeTime);
    metrics.put("decodeTime", decodeTime);
    metrics.put("pushes", pushes);
    metrics.put("pushFrames", pushFrames);
    metrics.put("pushWaitTime", pushWaitTime);
    metrics.put("pullRequests", pullRequests);
    metrics.put("pulledBatches", pulledBatches);
    metrics.put("pushedBatchesRead", pushedBatchesRead);
    return metrics;
  }
}
