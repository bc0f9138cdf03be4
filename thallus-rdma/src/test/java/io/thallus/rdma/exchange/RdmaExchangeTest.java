package io.thallus.rdma.exchange;

import static io.thallus.rdma.exchange.TypedMapOutputs.expected;
import static io.thallus.rdma.exchange.TypedMapOutputs.readAll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.exchange.EndpointAddress;
import io.thallus.exchange.EndpointOptions;
import io.thallus.exchange.ExchangeEndpoint;
import io.thallus.exchange.PartitionReader;
import io.thallus.exchange.ShuffleFetchException;
import io.thallus.testing.ChildJvm;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The exchange over rdma on the guest's rxe0, its two endpoints in two JVMs and serving rdma only: the child
 * ({@link MappingEndpointMain}) writes two maps of typed rows in six partitions and pushes the even partitions into
 * this JVM's endpoint (ingests on its server, by RDMA READ of the mapper's buffers or by WRITE into the reducer's
 * ring, as the child's {@code thallus.rdma.ingestTransfer} says); the reducer here reads every partition, the even
 * ones from what was pushed and the odd ones pulled (a query on the child's server, its batches read by RDMA READ),
 * and compares each row with DuckDB's own. Then it reads a pulled partition again and kills the child after the first
 * batch: the read ends with a {@link ShuffleFetchException} naming the child's endpoint and its maps. Runs in the
 * Soft-RoCE guest through RxeGuestTest.
 */
@Tag("rdma-device")
class RdmaExchangeTest {
  private static final int SHUFFLE = 1;
  private static final int PARTITIONS = 6;
  private static final long ROWS_PER_MAP = 24_000;
  /** About 125 KB batches, each answered on its own (64 KiB join size): 16 to a pulled partition, past 4 credits. */
  private static final int BATCH_ROWS = 500;
  private static final String JOIN_BYTES = Integer.toString(64 << 10);

  @TempDir
  Path spill;

  /** read: the default; by-size: WRITE up to half the reducer's ring; write: every push by WRITE, or it fails. */
  @ParameterizedTest(name = "pushes by {0}")
  @ValueSource(strings = {"read", "by-size", "write"})
  void aReducerReadsTypedPartitionsPushedAndPulledOverRdmaThenFailsTypedWhenTheMapperDiesMidRead(String transfer)
      throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         // 30 s instead of the default 2 minutes bounds a run that goes wrong.
         ExchangeEndpoint reducer = ExchangeEndpoint.start(EndpointOptions.builder(allocator, spill)
             .transports(List.of("rdma")).peerTransport("rdma").timeout(Duration.ofSeconds(30)).build());
         ChildJvm mapper = ChildJvm.start(MappingEndpointMain.class, spill.toString(), transfer, JOIN_BYTES,
             Integer.toString(SHUFFLE), Integer.toString(PARTITIONS), Long.toString(ROWS_PER_MAP),
             Integer.toString(BATCH_ROWS), reducer.address().toString(), "0,1")) {
      String ready = mapper.awaitLine("READY", 240);
      // At least one push per map, none refused.
      assertThat(ready).endsWith(" refused=0");
      assertThat(Integer.parseInt(ready.replaceAll(".* pushes=(\\d+) .*", "$1"))).isGreaterThanOrEqualTo(2);
      EndpointAddress child = EndpointAddress.parse(ready.split(" ")[1]);
      Map<EndpointAddress, List<Long>> locations = Map.of(child, List.of(0L, 1L));

      for (int p = 0; p < PARTITIONS; p++) {
        try (PartitionReader reader = reducer.read(SHUFFLE, p, locations)) {
          assertThat(readAll(reader)).as("partition " + p)
              .isEqualTo(expected(p, PARTITIONS, List.of(0, 1), ROWS_PER_MAP));
          if (p % 2 == 0) {
            assertThat(reader.pushedBatchesRead()).as("batches pushed for partition " + p).isPositive();
            assertThat(reader.pullRequests()).as("pulls of pushed partition " + p).isZero();
          } else {
            assertThat(reader.pushedBatchesRead()).as("batches pushed for partition " + p).isZero();
            assertThat(reader.pullRequests()).as("pulls of partition " + p).isEqualTo(1);
          }
        }
      }
      assertThat(reducer.stats().pullRequests()).isEqualTo(PARTITIONS / 2);
      assertThat(reducer.stats().pulledBatches()).isGreaterThanOrEqualTo(PARTITIONS / 2 * 16);
      assertThat(reducer.pushedBytesHeld()).isZero();

      // A peer that dies while its partition is being pulled: the batches in flight may still come, then the read
      // fails, typed, naming the peer and the maps to run again.
      try (PartitionReader reader = reducer.read(SHUFFLE, 1, locations)) {
        assertThat(reader.next()).isNotNull();
        mapper.kill();
        assertThatThrownBy(() -> {
          while (reader.next() != null) {
            // Drain what was in flight.
          }
        }).isInstanceOfSatisfying(ShuffleFetchException.class, e -> {
          assertThat(e.peer()).isEqualTo(child);
          assertThat(e.shuffleId()).isEqualTo(SHUFFLE);
          assertThat(e.partition()).isEqualTo(1);
          assertThat(e.mapIds()).containsExactly(0L, 1L);
        }).hasMessageContaining(child.toString());
      }
      // And the next read of that peer fails the same way at once: nothing left of it serves.
      try (PartitionReader reader = reducer.read(SHUFFLE, 3, locations)) {
        assertThatThrownBy(reader::next).isInstanceOfSatisfying(ShuffleFetchException.class,
            e -> assertThat(e.peer()).isEqualTo(child));
      }
    }
  }
}
