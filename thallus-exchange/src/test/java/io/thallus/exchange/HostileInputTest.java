package io.thallus.exchange;

import static io.thallus.exchange.ExchangeData.SCHEMA;
import static io.thallus.exchange.ExchangeData.expected;
import static io.thallus.exchange.ExchangeData.readAll;
import static io.thallus.exchange.ExchangeData.writeMap;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.IngestMode;
import io.thallus.IngestRequest;
import io.thallus.Location;
import io.thallus.QueryRequest;
import io.thallus.StatusCode;
import io.thallus.ThallusClient;
import io.thallus.ThallusException;
import io.thallus.ThallusIngest;
import io.thallus.ThallusStream;
import io.thallus.exchange.internal.ExchangeRequests;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a hostile or broken peer sends is refused with a clear error, and the endpoint goes on serving the others. */
class HostileInputTest {
  private static final int PARTITIONS = 4;

  @TempDir
  Path spill;
  private BufferAllocator allocator;
  private ExchangeEndpoint endpoint;
  private ThallusClient raw;

  @BeforeEach
  void start() {
    allocator = new RootAllocator();
    endpoint = ExchangeEndpoint.start(EndpointOptions.builder(allocator, spill).pushBufferBytesPerPeer(1 << 20)
        .build());
    writeMap(endpoint, allocator, 1, 0, PARTITIONS, 2, Collections.nCopies(PARTITIONS, null));
    raw = ThallusClient.connect(allocator, Location.of("127.0.0.1", endpoint.address().port(), "tcp"));
  }

  @AfterEach
  void stop() {
    raw.close();
    endpoint.close();
    allocator.close();
  }

  @Test
  void sqlIsRefused() {
    assertRefused(() -> drain(raw.query("SELECT 1")), StatusCode.INVALID_ARGUMENT, "answers only exchange pulls");
    assertStillServes();
  }

  @Test
  void aMalformedPullIsRefused() {
    assertRefused(() -> drain(raw.query(QueryRequest.builder(ExchangeRequests.PULL_STATEMENT)
        .parameters((Object) new byte[] {2, 1, 0, 0})
        .build())), StatusCode.INVALID_ARGUMENT, "truncated");
    assertRefused(() -> drain(raw.query(QueryRequest.builder(ExchangeRequests.PULL_STATEMENT)
        .parameters((Object) new byte[] {9, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0})
        .build())), StatusCode.INVALID_ARGUMENT, "version 9");
    // A map count far past what the request holds.
    assertRefused(() -> drain(raw.query(QueryRequest.builder(ExchangeRequests.PULL_STATEMENT)
        .parameters((Object) new byte[] {2, 1, 0, 0, 0, 1, 0x7f, 0, 0, 0, 0, 0, 0, 0})
        .build())), StatusCode.INVALID_ARGUMENT, "do not fit");
    assertRefused(() -> drain(raw.query(QueryRequest.builder(ExchangeRequests.PULL_STATEMENT)
        .parameters((Object) ExchangeRequests.encode(new ExchangeRequests.Pull(1, 99, new long[] {0})))
        .build())), StatusCode.INVALID_ARGUMENT, "partition 99");
    // A range whose last partition is past the map's, or names a map this endpoint never made.
    assertRefused(() -> drain(raw.query(QueryRequest.builder(ExchangeRequests.PULL_STATEMENT)
        .parameters((Object) ExchangeRequests.encode(new ExchangeRequests.Pull(1, new int[] {0, 2, PARTITIONS},
            new long[][] {{0}, {0}, {0}})))
        .build())), StatusCode.INVALID_ARGUMENT, "partition " + PARTITIONS);
    assertRefused(() -> drain(raw.query(QueryRequest.builder(ExchangeRequests.PULL_STATEMENT)
        .parameters((Object) ExchangeRequests.encode(new ExchangeRequests.Pull(1, new int[] {0, 1},
            new long[][] {{0}, {0, 7}})))
        .build())), StatusCode.NOT_FOUND, "maps [7]");
    assertStillServes();
  }

  @Test
  void anIngestWithoutAPushHeaderIsRefused() {
    try (VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, allocator)) {
      ExchangeData.fill(root, 0, 0, 0);
      assertRefused(() -> {
        try (ThallusIngest ingest = raw.ingest(IngestRequest.of("t", IngestMode.APPEND), SCHEMA)) {
          ingest.write(root);
          ingest.finish();
        }
      }, StatusCode.INVALID_ARGUMENT, "takes only exchange pushes");
    }
    assertStillServes();
  }

  @Test
  void aPushForARemovedShuffleIsRefused() {
    endpoint.removeShuffle(42);
    assertRefused(() -> push(new ExchangeRequests.PushHeader(42, 0, 0, true, 1000, new int[] {0}, new int[] {1}), 0),
        StatusCode.FAILED_PRECONDITION, "shuffle 42 was removed");
    assertStillServes();
  }

  @Test
  void aPushThatLiesAboutItsRowsIsRefusedAndKeepsNothing() {
    int rows = ExchangeData.rows(0, 0, 0);
    assertRefused(() -> push(new ExchangeRequests.PushHeader(3, 0, 0, true, 1 << 16, new int[] {0},
        new int[] {rows - 1}), 0), StatusCode.INVALID_ARGUMENT, "more rows than its header");
    assertRefused(() -> push(new ExchangeRequests.PushHeader(3, 1, 0, true, 1 << 16, new int[] {0},
        new int[] {rows + 5}), 0), StatusCode.INVALID_ARGUMENT, "its header says");
    // A push far larger than it announced (past the slack) is refused too.
    int many = ExchangeData.rows(4, 0, 0);
    assertRefused(() -> push(new ExchangeRequests.PushHeader(3, 4, 0, true, 8, new int[] {0}, new int[] {many}), 4),
        StatusCode.INVALID_ARGUMENT, "more than the 8 bytes it announced");
    assertStillServes();
  }

  @Test
  void aPushLargerThanThePeersBufferIsRefusedBeforeItsBatchIsSent() {
    assertRefused(() -> push(new ExchangeRequests.PushHeader(3, 0, 0, true, 64L << 20, new int[] {0},
        new int[] {ExchangeData.rows(0, 0, 0)}), 0), StatusCode.RESOURCE_EXHAUSTED, "does not fit");
    assertStillServes();
  }

  private void push(ExchangeRequests.PushHeader header, int map) {
    Schema withHeader = new Schema(SCHEMA.getFields(), Map.of(ExchangeRequests.PUSH_HEADER_KEY,
        ExchangeRequests.encode(header)));
    List<FieldVector> vectors = SCHEMA.getFields().stream().map(f -> f.createVector(allocator)).toList();
    try (VectorSchemaRoot root = new VectorSchemaRoot(withHeader, vectors, 0);
         ThallusIngest ingest = raw.ingest(IngestRequest.of(ExchangeRequests.PUSH_TABLE, IngestMode.APPEND),
             withHeader)) {
      ExchangeData.fill(root, map, 0, 0);
      ingest.write(root);
      ingest.finish();
    }
  }

  private static void drain(ThallusStream stream) {
    try (stream) {
      while (stream.hasNext()) {
        stream.next().close();
      }
    }
  }

  private static void assertRefused(Runnable action, StatusCode code, String message) {
    assertThatThrownBy(action::run).isInstanceOfSatisfying(ThallusException.class, e -> {
      assertThat(e.code()).isEqualTo(code);
      assertThat(e.getMessage()).contains(message);
    });
  }

  /** Another peer (a fresh connection) and the same one still read the map output in full. */
  private void assertStillServes() {
    try (ExchangeEndpoint other = ExchangeEndpoint.start(EndpointOptions.builder(allocator, spill).build());
         PartitionReader reader = other.read(1, 2, new LinkedHashMap<>(Map.of(endpoint.address(), List.of(0L))))) {
      assertThat(readAll(reader)).containsExactlyElementsOf(expected(2, List.of(0), 2));
    }
    assertThat(raw.isConnected()).isTrue();
  }
}
