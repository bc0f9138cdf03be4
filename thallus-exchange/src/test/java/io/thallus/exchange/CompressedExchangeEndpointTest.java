package io.thallus.exchange;

import static io.thallus.exchange.ExchangeData.expected;
import static io.thallus.exchange.ExchangeData.readAll;
import static io.thallus.exchange.ExchangeData.writeMap;
import static org.assertj.core.api.Assertions.assertThat;

import io.thallus.BatchCompression;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Endpoints that keep their map outputs compressed: commit sizes are the compressed bytes (well under the plain ones
 * for these rows), and what a reducer reads, pulled, pushed, spilled or its own, is every row once, in order.
 */
class CompressedExchangeEndpointTest extends EndpointFixture {
  private ExchangeEndpoint endpoint(BatchCompression codec, long memoryBound) {
    return endpoint("tcp", options -> options.compression(codec).memoryBound(memoryBound));
  }

  private static long total(long[] sizes) {
    return Arrays.stream(sizes).sum();
  }

  @ParameterizedTest
  @EnumSource(value = BatchCompression.class, names = {"LZ4_FRAME", "ZSTD"})
  void pulledRowsAreEveryRowOnceAndCommitSizesAreTheCompressedBytes(BatchCompression codec) {
    long plain;
    try (ExchangeEndpoint uncompressed = endpoint(BatchCompression.NONE, 512L << 20)) {
      plain = total(writeMap(uncompressed, allocator, 1, 0, PARTITIONS, BATCHES, none()));
    }
    try (ExchangeEndpoint mapper = endpoint(codec, 512L << 20);
         ExchangeEndpoint reducer = endpoint(codec, 512L << 20)) {
      long compressed = total(writeMap(mapper, allocator, 1, 0, PARTITIONS, BATCHES, none()));
      writeMap(mapper, allocator, 1, 1, PARTITIONS, BATCHES, none());
      assertThat(compressed).as("%s bytes against %d plain", codec, plain).isPositive().isLessThan(plain * 3 / 4);
      for (int p = 0; p < PARTITIONS; p++) {
        try (PartitionReader reader = reducer.read(1, p, Map.of(mapper.address(), List.of(0L, 1L)))) {
          assertThat(readAll(reader)).as("partition " + p).containsExactlyElementsOf(expected(p, List.of(0, 1),
              BATCHES));
        }
        // The mapper's own reads of its compressed outputs too.
        try (PartitionReader own = mapper.read(1, p, Map.of(mapper.address(), List.of(0L, 1L)))) {
          assertThat(readAll(own)).containsExactlyElementsOf(expected(p, List.of(0, 1), BATCHES));
        }
      }
      assertThat(reducer.stats().pullRequests()).isEqualTo(PARTITIONS);
    }
  }

  /**
   * A pull of one partition from a compressed endpoint is one batch (one BATCH frame, one body) however many maps and
   * pieces it gathers: the answer decompresses them, joins them and compresses the whole once.
   */
  @ParameterizedTest
  @EnumSource(value = BatchCompression.class, names = {"LZ4_FRAME", "ZSTD"})
  void aPullOfManyMapsPartitionArrivesAsOneCompressedBatch(BatchCompression codec) {
    List<Integer> maps = List.of(0, 1, 2, 3);
    try (ExchangeEndpoint mapper = endpoint(codec, 512L << 20);
         ExchangeEndpoint reducer = endpoint(codec, 512L << 20)) {
      for (int map : maps) {
        writeMap(mapper, allocator, 4, map, PARTITIONS, BATCHES, none());
      }
      for (int p = 0; p < PARTITIONS; p++) {
        try (PartitionReader reader = reducer.read(4, p, Map.of(mapper.address(), List.of(0L, 1L, 2L, 3L)))) {
          assertThat(readAll(reader)).as("partition " + p).containsExactlyElementsOf(expected(p, maps, BATCHES));
          assertThat(reader.pullRequests()).isEqualTo(1);
          assertThat(reader.pulledBatches()).as("%d maps x %d pieces in one body", maps.size(), BATCHES)
              .isEqualTo(1);
        }
      }
      assertThat(reducer.stats().pulledBatches()).isEqualTo(PARTITIONS);
    }
  }

  /**
   * A compressed push of one map's chunk (every partition, several pieces each) arrives as one BATCH frame, and the
   * receiver splits it into the partitions' runs: each reducer reads exactly its rows, whole, pulling nothing.
   */
  @ParameterizedTest
  @EnumSource(value = BatchCompression.class, names = {"LZ4_FRAME", "ZSTD"})
  void aCompressedPushOfSeveralPartitionsIsOneFrameSplitIntoItsRuns(BatchCompression codec) throws Exception {
    try (ExchangeEndpoint mapper = endpoint(codec, 512L << 20);
         ExchangeEndpoint reducer = endpoint(codec, 512L << 20)) {
      List<EndpointAddress> all = all(reducer.address());
      writeMap(mapper, allocator, 5, 0, PARTITIONS, BATCHES, all);
      writeMap(mapper, allocator, 5, 1, PARTITIONS, BATCHES, all);
      assertThat(mapper.awaitPushes(Duration.ofMinutes(2))).isTrue();
      assertThat(mapper.stats().pushesRefused()).isZero();
      // Each map's rows fit one chunk: one push per map, one frame per push.
      assertThat(mapper.stats().pushes()).isEqualTo(2);
      assertThat(reducer.stats().pushesReceived()).isEqualTo(2);
      assertThat(reducer.stats().pushFramesReceived()).isEqualTo(2);
      for (int p = 0; p < PARTITIONS; p++) {
        try (PartitionReader reader = reducer.read(5, p, Map.of(mapper.address(), List.of(0L, 1L)))) {
          assertThat(readAll(reader)).as("partition " + p).containsExactlyElementsOf(expected(p, List.of(0, 1),
              BATCHES));
          assertThat(reader.pullRequests()).isZero();
        }
      }
      assertThat(reducer.stats().pullRequests()).isZero();
      assertThat(reducer.stats().pushedBatchesRead()).isPositive();
    }
  }

  @ParameterizedTest
  @EnumSource(value = BatchCompression.class, names = {"LZ4_FRAME"})
  void spilledCompressedOutputsReadBackWhole(BatchCompression codec) {
    try (ExchangeEndpoint mapper = endpoint(codec, 16 << 10);
         ExchangeEndpoint reducer = endpoint(codec, 512L << 20)) {
      writeMap(mapper, allocator, 3, 0, PARTITIONS, BATCHES, none());
      writeMap(mapper, allocator, 3, 1, PARTITIONS, BATCHES, none());
      assertThat(mapper.stats().spilledBytes()).isPositive();
      for (int p = 0; p < PARTITIONS; p++) {
        try (PartitionReader reader = reducer.read(3, p, Map.of(mapper.address(), List.of(0L, 1L)))) {
          assertThat(readAll(reader)).containsExactlyElementsOf(expected(p, List.of(0, 1), BATCHES));
        }
      }
      mapper.removeShuffle(3);
    }
  }
}
