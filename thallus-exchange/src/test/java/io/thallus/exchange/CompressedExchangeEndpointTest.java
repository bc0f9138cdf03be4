package io.thallus.exchange;

import static io.thallus.exchange.ExchangeData.expected;
import static io.thallus.exchange.ExchangeData.readAll;
import static io.thallus.exchange.ExchangeData.writeMap;
import static org.assertj.core.api.Assertions.assertThat;

import io.thallus.BatchCompression;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Endpoints that keep their map outputs compressed: commit sizes are the compressed bytes (well under the plain ones
 * for these rows), and what a reducer reads, pulled, pushed, spilled or its own, is every row once, in order.
 */
class CompressedExchangeEndpointTest {
  private static final int PARTITIONS = 6;
  private static final int BATCHES = 3;

  @TempDir
  Path spill;
  private BufferAllocator allocator;

  @BeforeEach
  void allocator() {
    allocator = new RootAllocator();
  }

  @AfterEach
  void noLeak() {
    allocator.close();
  }

  private ExchangeEndpoint endpoint(BatchCompression codec, long memoryBound) {
    return ExchangeEndpoint.start(EndpointOptions.builder(allocator, spill).peerTransport("tcp")
        .compression(codec).memoryBound(memoryBound).build());
  }

  private static long total(long[] sizes) {
    return Arrays.stream(sizes).sum();
  }

  @ParameterizedTest
  @EnumSource(value = BatchCompression.class, names = {"LZ4_FRAME", "ZSTD"})
  void pulledRowsAreEveryRowOnceAndCommitSizesAreTheCompressedBytes(BatchCompression codec) {
    long plain;
    try (ExchangeEndpoint uncompressed = endpoint(BatchCompression.NONE, 512L << 20)) {
      plain = total(writeMap(uncompressed, allocator, 1, 0, PARTITIONS, BATCHES,
          Collections.nCopies(PARTITIONS, null)));
    }
    try (ExchangeEndpoint mapper = endpoint(codec, 512L << 20);
         ExchangeEndpoint reducer = endpoint(codec, 512L << 20)) {
      long compressed = total(writeMap(mapper, allocator, 1, 0, PARTITIONS, BATCHES,
          Collections.nCopies(PARTITIONS, null)));
      writeMap(mapper, allocator, 1, 1, PARTITIONS, BATCHES, Collections.nCopies(PARTITIONS, null));
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

  @ParameterizedTest
  @EnumSource(value = BatchCompression.class, names = {"LZ4_FRAME", "ZSTD"})
  void pushedCompressedBatchesReachTheReducerWhole(BatchCompression codec) throws Exception {
    try (ExchangeEndpoint mapper = endpoint(codec, 512L << 20);
         ExchangeEndpoint reducer = endpoint(codec, 512L << 20)) {
      List<EndpointAddress> all = Collections.nCopies(PARTITIONS, reducer.address());
      writeMap(mapper, allocator, 2, 0, PARTITIONS, BATCHES, all);
      writeMap(mapper, allocator, 2, 1, PARTITIONS, BATCHES, all);
      assertThat(mapper.awaitPushes(Duration.ofMinutes(2))).isTrue();
      assertThat(mapper.stats().pushesRefused()).isZero();
      for (int p = 0; p < PARTITIONS; p++) {
        try (PartitionReader reader = reducer.read(2, p, Map.of(mapper.address(), List.of(0L, 1L)))) {
          assertThat(readAll(reader)).as("partition " + p).containsExactlyElementsOf(expected(p, List.of(0, 1),
              BATCHES));
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
      writeMap(mapper, allocator, 3, 0, PARTITIONS, BATCHES, Collections.nCopies(PARTITIONS, null));
      writeMap(mapper, allocator, 3, 1, PARTITIONS, BATCHES, Collections.nCopies(PARTITIONS, null));
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
