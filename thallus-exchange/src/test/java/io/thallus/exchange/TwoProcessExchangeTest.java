package io.thallus.exchange;

import static io.thallus.exchange.ExchangeData.expected;
import static io.thallus.exchange.ExchangeData.readAll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.testing.ChildJvm;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Endpoints in two JVM processes: the child's maps push half their partitions into this JVM's endpoint, which reads
 * every partition (pushed ones from its buffer, the rest pulled from the child), then reads again after the child
 * was killed and gets the typed error naming it.
 */
class TwoProcessExchangeTest {
  private static final int PARTITIONS = 8;
  private static final int BATCHES = 3;

  @TempDir
  Path spill;

  @ParameterizedTest
  @ValueSource(strings = {"shm", "tcp", "cma"})
  void aReducerReadsAnotherProcesssMapsPushedAndPulledThenFailsTypedWhenItDies(String transport) throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         // 30 s instead of the default 2 minutes bounds a run that goes wrong: a pull on a dead peer fails at once.
         ExchangeEndpoint reducer = ExchangeEndpoint.start(EndpointOptions.builder(allocator, spill)
             .peerTransport(transport).timeout(java.time.Duration.ofSeconds(30)).build())) {
      EndpointAddress child;
      try (ChildJvm mapper = ChildJvm.start(EndpointChildMain.class, spill.toString(), transport, "1",
          Integer.toString(PARTITIONS), Integer.toString(BATCHES), reducer.address().toString(), "0,1")) {
        String ready = mapper.awaitLine("READY", 180);
        assertThat(ready).contains("pushes=2").contains("refused=0");
        child = EndpointAddress.parse(ready.split(" ")[1]);
        for (int p = 0; p < PARTITIONS; p++) {
          try (PartitionReader reader = reducer.read(1, p, new LinkedHashMap<>(Map.of(child, List.of(0L, 1L))))) {
            assertThat(readAll(reader)).as("partition " + p)
                .containsExactlyElementsOf(expected(p, List.of(0, 1), BATCHES));
          }
        }
        // Even partitions were pushed here; the odd ones were pulled, one request each.
        assertThat(reducer.stats().pullRequests()).isEqualTo(PARTITIONS / 2);
        assertThat(reducer.stats().pushedBatchesRead()).isPositive();
        mapper.kill();
      }
      try (PartitionReader reader = reducer.read(1, 0, new LinkedHashMap<>(Map.of(child, List.of(0L, 1L))))) {
        EndpointAddress dead = child;
        assertThatThrownBy(() -> readAll(reader)).isInstanceOfSatisfying(ShuffleFetchException.class, e -> {
          assertThat(e.peer()).isEqualTo(dead);
          assertThat(e.mapIds()).containsExactly(0L, 1L);
        });
      }
    }
  }
}
