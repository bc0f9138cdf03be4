package io.thallus.spark;

import io.thallus.QueryRequest;
import io.thallus.ThallusClient;
import org.apache.arrow.memory.BufferAllocator;

/** What the connector shares within one JVM (driver or executor): the Arrow allocator every client's memory is under. */
final class Connector {
  private Connector() {}

  private static final BufferAllocator ALLOCATOR = ThallusClient.newRootAllocator();

  static ThallusClient connect(ReadConf conf, int server) {
    return ThallusClient.connect(ALLOCATOR, conf.location(server), conf.clientOptions());
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
