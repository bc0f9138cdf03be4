package io.thallus.spark;

import io.thallus.QueryRequest;
import io.thallus.ThallusClient;
import io.thallus.ThallusException;
import org.apache.arrow.memory.BufferAllocator;

/** What the connector shares within one JVM (driver or executor): the Arrow allocator every client's memory is under. */
final class Connector {
  private Connector() {}

  private static final BufferAllocator ALLOCATOR = ThallusClient.newRootAllocator();

  static ThallusClient connect(ReadConf conf, int server) {
    return ThallusClient.connect(ALLOCATOR, conf.location(server), conf.clientOptions());
  }

  /**
   * A partition's connection: to server {@code server}, or, when it cannot be reached, to the read's next servers in
   * turn (they serve the same data: replicas). Fails with UNAVAILABLE naming every server tried.
   */
  static ThallusClient connectForRead(ReadConf conf, int server) {
    ThallusException down = null;
    for (int i = 0; i < conf.urls().size(); i++) {
      try {
        return ThallusClient.connect(ALLOCATOR, conf.location(server + i), conf.clientOptions());
      } catch (ThallusException e) {
        if (e.code() != io.thallus.StatusCode.UNAVAILABLE) {
          throw e;
        }
        if (down == null) {
          down = e;
        } else {
          down.addSuppressed(e);
        }
      }
    }
    if (conf.urls().size() == 1) {
      throw down;
    }
    throw ThallusException.of(io.thallus.StatusCode.UNAVAILABLE, "no server of " + conf.urls() + " is up: "
        + down.getMessage() + suppressed(down), down);
  }

  private static String suppressed(Throwable e) {
    StringBuilder text = new StringBuilder();
    for (Throwable other : e.getSuppressed()) {
      text.append("; ").append(other.getMessage());
    }
    return text.toString();
  }

  static BufferAllocator allocator() {
    return ALLOCATOR;
  }

  /** A request for {@code sql} with the read's datasets (named or not), batch size and timeout. */
  static QueryRequest request(ReadConf conf, String sql) {
    QueryRequest.Builder builder = QueryRequest.builder(sql).batchRows(conf.batchRows());
    conf.dataset().ifPresent(builder::dataset);
    conf.namedDatasets().forEach(builder::dataset);
    conf.queryTimeout().ifPresent(builder::timeout);
    return builder.build();
  }

  /** An allocator for a writer's batches, under the connector's. */
  static BufferAllocator newAllocator(String name) {
    return ALLOCATOR.newChildAllocator(name, 0, Long.MAX_VALUE);
  }

  /** Bytes the connector's clients hold in this JVM right now; zero once every reader has closed. */
  static long allocatedBytes() {
    return ALLOCATOR.getAllocatedMemory();
  }
}
