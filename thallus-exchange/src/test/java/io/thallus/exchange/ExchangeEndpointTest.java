package io.thallus.exchange;

import static io.thallus.exchange.ExchangeData.SCHEMA;
import static io.thallus.exchange.ExchangeData.byMap;
import static io.thallus.exchange.ExchangeData.expected;
import static io.thallus.exchange.ExchangeData.readAll;
import static io.thallus.exchange.ExchangeData.writeMap;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Two endpoints in one JVM over real sockets and each transport: pulls, pushes, the fallback from one to the other. */
class ExchangeEndpointTest extends EndpointFixture {
  @ParameterizedTest
  @ValueSource(strings = {"shm", "tcp", "cma"})
  void aReducerPullsEveryMapsRowsOnceInOrderWithOneRequestPerPeer(String transport) {
    try (ExchangeEndpoint mapper = endpoint(transport, b -> b);
         ExchangeEndpoint reducer = endpoint(transport, b -> b)) {
      long[] sizes0 = writeMap(mapper, allocator, 1, 0, PARTITIONS, BATCHES, none());
      writeMap(mapper, allocator, 1, 1, PARTITIONS, BATCHES, none());
      assertThat(java.util.Arrays.stream(sizes0).min().orElseThrow()).isPositive();
      for (int p = 0; p < PARTITIONS; p++) {
        try (PartitionReader reader = reader(reducer, 1, p, Map.of(mapper.address(), List.of(0L, 1L)))) {
          assertThat(readAll(reader)).as("partition " + p).containsExactlyElementsOf(expected(p, List.of(0, 1),
              BATCHES));
        }
      }
      ExchangeStats stats = reducer.stats();
      assertThat(stats.pullRequests()).isEqualTo(PARTITIONS);
      // Every map's pieces of one partition come joined into one batch: one body per pull.
      assertThat(stats.pulledBatches()).isEqualTo(PARTITIONS);
      assertThat(stats.pushedBatchesRead()).isZero();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"shm", "tcp"})
  void mapsPushToTheReducersEndpointWhichReadsThemWithoutAPull(String transport) throws Exception {
    try (ExchangeEndpoint mapper = endpoint(transport, b -> b);
         ExchangeEndpoint reducer = endpoint(transport, b -> b)) {
      writeMap(mapper, allocator, 2, 0, PARTITIONS, BATCHES, all(reducer.address()));
      writeMap(mapper, allocator, 2, 1, PARTITIONS, BATCHES, all(reducer.address()));
      assertThat(mapper.awaitPushes(Duration.ofMinutes(2))).isTrue();
      assertThat(mapper.stats().pushes()).isEqualTo(2);
      assertThat(mapper.stats().pushesRefused()).isZero();
      for (int p = 0; p < PARTITIONS; p++) {
        try (PartitionReader reader = reader(reducer, 2, p, Map.of(mapper.address(), List.of(0L, 1L)))) {
          assertThat(readAll(reader)).as("partition " + p).containsExactlyElementsOf(expected(p, List.of(0, 1),
              BATCHES));
        }
      }
      assertThat(reducer.stats().pullRequests()).isZero();
      assertThat(reducer.stats().pushedBatchesRead()).isPositive();
      // A second read of a partition (a retried reduce task) pulls what was taken: still every row once.
      try (PartitionReader again = reader(reducer, 2, 0, Map.of(mapper.address(), List.of(0L, 1L)))) {
        assertThat(readAll(again)).containsExactlyElementsOf(expected(0, List.of(0, 1), BATCHES));
      }
      assertThat(reducer.stats().pullRequests()).isEqualTo(1);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"shm", "tcp"})
  void aReducerThatReadsBeforeThePushesArriveGetsEveryRowOnceAndLatePushesAreFreed(String transport)
      throws Exception {
    try (ExchangeEndpoint mapper = endpoint(transport, b -> b);
         ExchangeEndpoint reducer = endpoint(transport, b -> b)) {
      writeMap(mapper, allocator, 8, 0, PARTITIONS, BATCHES, all(reducer.address()));
      writeMap(mapper, allocator, 8, 1, PARTITIONS, BATCHES, all(reducer.address()));
      // No wait for the pushes: each map is read from the push buffer if all of it arrived, pulled otherwise.
      for (int p = 0; p < PARTITIONS; p++) {
        try (PartitionReader reader = reader(reducer, 8, p, Map.of(mapper.address(), List.of(0L, 1L)))) {
          List<String> rows = readAll(reader);
          assertThat(rows).hasSize(expected(p, List.of(0, 1), BATCHES).size());
          assertThat(byMap(rows).get(0L)).containsExactlyElementsOf(expected(p, List.of(0), BATCHES));
          assertThat(byMap(rows).get(1L)).containsExactlyElementsOf(expected(p, List.of(1), BATCHES));
        }
      }
      assertThat(mapper.awaitPushes(Duration.ofMinutes(2))).isTrue();
      // Whatever arrived after its reducer pulled it was freed, not kept until the shuffle is removed.
      assertThat(reducer.pushedBytesHeld()).isZero();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"shm", "tcp"})
  void partitionsWhoseReducerIsAbsentArePulledAndTheRestPushed(String transport) throws Exception {
    EndpointAddress absent;
    try (ExchangeEndpoint gone = endpoint(transport, b -> b)) {
      absent = gone.address();
    }
    try (ExchangeEndpoint mapper = endpoint(transport, b -> b);
         ExchangeEndpoint reducer = endpoint(transport, b -> b)) {
      List<EndpointAddress> targets = new ArrayList<>();
      for (int p = 0; p < PARTITIONS; p++) {
        targets.add(p % 2 == 0 ? reducer.address() : absent);
      }
      writeMap(mapper, allocator, 3, 0, PARTITIONS, BATCHES, targets);
      writeMap(mapper, allocator, 3, 1, PARTITIONS, BATCHES, targets);
      assertThat(mapper.awaitPushes(Duration.ofMinutes(2))).isTrue();
      assertThat(mapper.stats().pushesRefused()).isPositive();
      for (int p = 0; p < PARTITIONS; p++) {
        try (PartitionReader reader = reader(reducer, 3, p, Map.of(mapper.address(), List.of(0L, 1L)))) {
          assertThat(readAll(reader)).as("partition " + p).containsExactlyElementsOf(expected(p, List.of(0, 1),
              BATCHES));
        }
      }
      // The odd partitions' reducer was absent: pulled.
      assertThat(reducer.stats().pullRequests()).isEqualTo(PARTITIONS / 2);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"shm", "tcp"})
  void aFullReducerBufferRefusesPushesAndTheRestIsPulled(String transport) throws Exception {
    try (ExchangeEndpoint mapper = endpoint(transport, b -> b.pushChunkBytes(32 << 10));
         ExchangeEndpoint reducer = endpoint(transport, b -> b.pushBufferBytesPerPeer(100 << 10))) {
      List<Integer> maps = List.of(0, 1, 2, 3);
      for (int map : maps) {
        writeMap(mapper, allocator, 4, map, PARTITIONS, BATCHES, all(reducer.address()));
      }
      assertThat(mapper.awaitPushes(Duration.ofMinutes(2))).isTrue();
      assertThat(mapper.stats().pushes()).isPositive();
      assertThat(mapper.stats().pushesRefused()).isPositive();
      for (int p = 0; p < PARTITIONS; p++) {
        try (PartitionReader reader = reader(reducer, 4, p, Map.of(mapper.address(), maps.stream().map(Long::valueOf).toList()))) {
          List<String> rows = readAll(reader);
          Map<Long, List<String>> grouped = byMap(rows);
          assertThat(rows).hasSize(expected(p, maps, BATCHES).size());
          for (int map : maps) {
            assertThat(grouped.get((long) map)).as("partition " + p + " map " + map)
                .containsExactlyElementsOf(expected(p, List.of(map), BATCHES));
          }
        }
      }
      assertThat(reducer.stats().pullRequests()).isPositive().isLessThanOrEqualTo(PARTITIONS);
      // Every pushed batch was either taken or freed with its refused map: the buffer is empty again, and takes
      // the next shuffle's pushes.
      assertThat(reducer.pushedBytesHeld()).isZero();
      long pushes = mapper.stats().pushes();
      writeMap(mapper, allocator, 40, 0, PARTITIONS, 1, all(reducer.address()));
      assertThat(mapper.awaitPushes(Duration.ofMinutes(2))).isTrue();
      assertThat(mapper.stats().pushes()).isGreaterThan(pushes);
      reducer.removeShuffle(40);
      assertThat(reducer.pushedBytesHeld()).isZero();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"shm", "tcp"})
  void pastItsMemoryBoundAnEndpointSpillsAndRemoveShuffleLeavesNoFile(String transport) throws Exception {
    try (ExchangeEndpoint mapper = endpoint(transport, b -> b.memoryBound(64 << 10));
         ExchangeEndpoint reducer = endpoint(transport, b -> b)) {
      writeMap(mapper, allocator, 5, 0, PARTITIONS, BATCHES, none());
      writeMap(mapper, allocator, 5, 1, PARTITIONS, BATCHES, none());
      assertThat(mapper.stats().spilledBytes()).isPositive();
      assertThat(mapper.memoryBytes()).isLessThanOrEqualTo(64 << 10);
      assertThat(files(mapper.spillFolder())).isNotEmpty();
      for (int p = 0; p < PARTITIONS; p++) {
        try (PartitionReader reader = reader(reducer, 5, p, Map.of(mapper.address(), List.of(0L, 1L)))) {
          assertThat(readAll(reader)).as("partition " + p).containsExactlyElementsOf(expected(p, List.of(0, 1),
              BATCHES));
        }
        // The endpoint's own reads come from its spill file too.
        try (PartitionReader local = reader(mapper, 5, p, Map.of(mapper.address(), List.of(1L)))) {
          assertThat(readAll(local)).containsExactlyElementsOf(expected(p, List.of(1), BATCHES));
        }
      }
      mapper.removeShuffle(5);
      assertThat(files(mapper.spillFolder())).isEmpty();
      assertThat(mapper.memoryBytes()).isZero();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"shm", "tcp"})
  void aClosedPeerFailsTheReadWithATypedErrorNamingItAndTheMaps(String transport) {
    try (ExchangeEndpoint reducer = endpoint(transport, b -> b)) {
      EndpointAddress closed;
      try (ExchangeEndpoint mapper = endpoint(transport, b -> b)) {
        writeMap(mapper, allocator, 6, 0, PARTITIONS, BATCHES, none());
        writeMap(mapper, allocator, 6, 1, PARTITIONS, BATCHES, none());
        closed = mapper.address();
        try (PartitionReader reader = reader(reducer, 6, 0, Map.of(closed, List.of(0L, 1L)))) {
          assertThat(readAll(reader)).hasSize(expected(0, List.of(0, 1), BATCHES).size());
        }
      }
      try (PartitionReader reader = reader(reducer, 6, 1, Map.of(closed, List.of(0L, 1L)))) {
        assertThatThrownBy(() -> readAll(reader)).isInstanceOfSatisfying(ShuffleFetchException.class, e -> {
          assertThat(e.peer()).isEqualTo(closed);
          assertThat(e.mapIds()).containsExactly(0L, 1L);
          assertThat(e.shuffleId()).isEqualTo(6);
          assertThat(e.partition()).isEqualTo(1);
          assertThat(e.getMessage()).contains(closed.toString());
        });
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"shm", "tcp"})
  void aPeerThatLostTheOutputFailsTheReadNamingTheMissingMaps(String transport) {
    try (ExchangeEndpoint mapper = endpoint(transport, b -> b);
         ExchangeEndpoint reducer = endpoint(transport, b -> b)) {
      writeMap(mapper, allocator, 7, 0, PARTITIONS, BATCHES, none());
      try (PartitionReader reader = reader(reducer, 7, 0, Map.of(mapper.address(), List.of(0L, 9L)))) {
        assertThatThrownBy(() -> readAll(reader)).isInstanceOfSatisfying(ShuffleFetchException.class, e -> {
          assertThat(e.peer()).isEqualTo(mapper.address());
          assertThat(e.mapIds()).containsExactly(0L, 9L);
          assertThat(e.getMessage()).contains("maps [9]");
        });
      }
      mapper.removeShuffle(7);
      try (PartitionReader reader = reader(reducer, 7, 0, Map.of(mapper.address(), List.of(0L)))) {
        assertThatThrownBy(() -> readAll(reader)).isInstanceOf(ShuffleFetchException.class);
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"shm", "tcp"})
  void anEndpointWithASecretServesPeersThatShareItAndRefusesOthers(String transport) {
    try (ExchangeEndpoint mapper = endpoint(transport, b -> b.secret("application secret"));
         ExchangeEndpoint sharing = endpoint(transport, b -> b.secret("application secret"));
         ExchangeEndpoint stranger = endpoint(transport, b -> b);
         ExchangeEndpoint wrong = endpoint(transport, b -> b.secret("another application"))) {
      writeMap(mapper, allocator, 11, 0, PARTITIONS, BATCHES, none());
      try (PartitionReader reader = reader(sharing, 11, 2, Map.of(mapper.address(), List.of(0L)))) {
        assertThat(readAll(reader)).containsExactlyElementsOf(expected(2, List.of(0), BATCHES));
      }
      for (ExchangeEndpoint refused : List.of(stranger, wrong)) {
        try (PartitionReader reader = reader(refused, 11, 2, Map.of(mapper.address(), List.of(0L)))) {
          assertThatThrownBy(() -> readAll(reader)).isInstanceOfSatisfying(ShuffleFetchException.class, e -> {
            assertThat(e.peer()).isEqualTo(mapper.address());
            assertThat(e.getCause()).isInstanceOfSatisfying(io.thallus.ThallusException.class,
                cause -> assertThat(cause.code()).isEqualTo(io.thallus.StatusCode.UNAUTHENTICATED));
          });
        }
      }
    }
  }

  private static PartitionReader reader(ExchangeEndpoint endpoint, int shuffle, int partition,
      Map<EndpointAddress, List<Long>> locations) {
    return endpoint.read(shuffle, partition, new LinkedHashMap<>(locations));
  }

  static List<Path> files(Path folder) throws java.io.IOException {
    if (!Files.exists(folder)) {
      return List.of();
    }
    try (Stream<Path> walk = Files.walk(folder)) {
      return walk.filter(Files::isRegularFile).toList();
    }
  }

}
