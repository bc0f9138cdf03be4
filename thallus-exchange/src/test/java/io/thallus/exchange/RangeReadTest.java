package io.thallus.exchange;

import static io.thallus.exchange.ExchangeData.expected;
import static io.thallus.exchange.ExchangeData.readAll;
import static io.thallus.exchange.ExchangeData.writeMap;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** A reduce task's read of several partitions at once: one pull per peer for the whole range. */
class RangeReadTest extends EndpointFixture {
  private ExchangeEndpoint endpoint(String transport) {
    return endpoint(transport, options -> options);
  }

  @ParameterizedTest
  @ValueSource(strings = {"shm", "tcp"})
  void threePartitionsOfFourMapsAreOnePullAndOneBodyWithEveryRowOnceInPartitionOrder(String transport) {
    try (ExchangeEndpoint mapper = endpoint(transport);
         ExchangeEndpoint reducer = endpoint(transport)) {
      for (int map = 0; map < 4; map++) {
        writeMap(mapper, allocator, 1, map, PARTITIONS, BATCHES, none());
      }
      TreeMap<Integer, Map<EndpointAddress, List<Long>>> range = new TreeMap<>();
      List<String> expected = new ArrayList<>();
      for (int p = 1; p <= 3; p++) {
        range.put(p, Map.of(mapper.address(), List.of(0L, 1L, 2L, 3L)));
        expected.addAll(expected(p, List.of(0, 1, 2, 3), BATCHES));
      }
      try (PartitionReader reader = reducer.read(1, range)) {
        assertThat(readAll(reader)).containsExactlyElementsOf(expected);
        assertThat(reader.partitions()).containsExactly(1, 2, 3);
        assertThat(reader.pullRequests()).isEqualTo(1);
        assertThat(reader.pulledBatches()).isEqualTo(1);
      }
      assertThat(reducer.stats().pullRequests()).isEqualTo(1);
      assertThat(reducer.stats().pulledBatches()).isEqualTo(1);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"tcp"})
  void partitionsWithDifferentMapsReadEachPartitionsOwnMapsInOnePull(String transport) {
    try (ExchangeEndpoint mapper = endpoint(transport);
         ExchangeEndpoint reducer = endpoint(transport)) {
      for (int map = 0; map < 4; map++) {
        writeMap(mapper, allocator, 2, map, PARTITIONS, BATCHES, none());
      }
      TreeMap<Integer, Map<EndpointAddress, List<Long>>> range = new TreeMap<>();
      range.put(1, Map.of(mapper.address(), List.of(0L, 1L)));
      range.put(2, Map.of(mapper.address(), List.of(3L)));
      range.put(4, Map.of(mapper.address(), List.of(2L, 0L)));
      List<String> expected = new ArrayList<>(expected(1, List.of(0, 1), BATCHES));
      expected.addAll(expected(2, List.of(3), BATCHES));
      expected.addAll(expected(4, List.of(2, 0), BATCHES));
      try (PartitionReader reader = reducer.read(2, range)) {
        assertThat(readAll(reader)).containsExactlyElementsOf(expected);
        assertThat(reader.pullRequests()).isEqualTo(1);
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"shm", "tcp"})
  void pushedPartsAreReadHereAndTheRestOfTheRangeIsOnePull(String transport) throws Exception {
    try (ExchangeEndpoint mapper = endpoint(transport);
         ExchangeEndpoint reducer = endpoint(transport)) {
      List<EndpointAddress> toReducer = all(reducer.address());
      writeMap(mapper, allocator, 3, 0, PARTITIONS, BATCHES, toReducer);
      writeMap(mapper, allocator, 3, 1, PARTITIONS, BATCHES, toReducer);
      writeMap(mapper, allocator, 3, 2, PARTITIONS, BATCHES, none());
      assertThat(mapper.awaitPushes(Duration.ofMinutes(2))).isTrue();
      assertThat(mapper.stats().pushesRefused()).isZero();
      TreeMap<Integer, Map<EndpointAddress, List<Long>>> range = new TreeMap<>();
      List<String> expected = new ArrayList<>();
      for (int p = 0; p < 3; p++) {
        range.put(p, Map.of(mapper.address(), List.of(0L, 1L, 2L)));
        expected.addAll(expected(p, List.of(0, 1, 2), BATCHES));
      }
      try (PartitionReader reader = reducer.read(3, range)) {
        assertThat(readAll(reader)).containsExactlyInAnyOrderElementsOf(expected);
        assertThat(reader.pushedBatchesRead()).isPositive();
        assertThat(reader.pullRequests()).isEqualTo(1);
        assertThat(reader.pulledBatches()).isEqualTo(1);
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"tcp"})
  void aPeerThatDiesMidRangeFailsNamingThePeerThePartitionsAndTheMaps(String transport) {
    try (ExchangeEndpoint reducer = endpoint(transport)) {
      writeMap(reducer, allocator, 4, 5, PARTITIONS, BATCHES, none());
      EndpointAddress dead;
      TreeMap<Integer, Map<EndpointAddress, List<Long>>> range = new TreeMap<>();
      try (ExchangeEndpoint mapper = endpoint(transport)) {
        writeMap(mapper, allocator, 4, 0, PARTITIONS, BATCHES, none());
        writeMap(mapper, allocator, 4, 1, PARTITIONS, BATCHES, none());
        dead = mapper.address();
        for (int p = 2; p <= 4; p++) {
          Map<EndpointAddress, List<Long>> locations = new LinkedHashMap<>();
          locations.put(reducer.address(), List.of(5L));
          locations.put(dead, p == 3 ? List.of(1L) : List.of(0L, 1L));
          range.put(p, locations);
        }
        try (PartitionReader reader = reducer.read(4, range)) {
          // The reducer's own batches come first; the peer dies before the reader reaches its pull.
          VectorSchemaRoot first = reader.next();
          assertThat(first).isNotNull();
          mapper.close();
          assertThatThrownBy(() -> readAll(reader)).isInstanceOfSatisfying(ShuffleFetchException.class, e -> {
            assertThat(e.peer()).isEqualTo(dead);
            assertThat(e.shuffleId()).isEqualTo(4);
            assertThat(e.partitions()).containsExactly(2, 3, 4);
            assertThat(e.partition()).isEqualTo(2);
            assertThat(e.mapIds()).containsExactly(0L, 1L);
            assertThat(e.getMessage()).contains("partitions [2, 3, 4]").contains(dead.toString());
          });
        }
      }
    }
  }
}
