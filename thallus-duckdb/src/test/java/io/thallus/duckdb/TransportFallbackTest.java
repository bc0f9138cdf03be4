package io.thallus.duckdb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.Location;
import io.thallus.StatusCode;
import io.thallus.ThallusClient;
import io.thallus.ThallusException;
import io.thallus.server.ThallusServer;
import io.thallus.ThallusStream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;

/** A transport whose client side cannot start is skipped when the client may choose, and reported when asked for. */
class TransportFallbackTest {
  @Test
  void theBestUsableTransportIsChosenWhenThePreferredOneCannotStart() {
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0), DuckDBEngine.create())
             .build()
             .start()) {
      assertThat(server.transports()).contains("refusing", "shm", "cma", "tcp", "ipc");
      try (ThallusClient client = ThallusClient.connect(allocator, server.getLocation());
           ThallusStream stream = client.query("SELECT 41 + 1 AS answer")) {
        assertThat(client.transport()).isEqualTo("shm");
        try (VectorSchemaRoot root = stream.next()) {
          assertThat(root.getVector("answer").getObject(0)).isEqualTo(42);
        }
      }
      assertThatThrownBy(() -> ThallusClient.connect(allocator, server.getLocation().withTransport("refusing")))
          .isInstanceOfSatisfying(ThallusException.class, e -> {
            assertThat(e.code()).isEqualTo(StatusCode.UNAVAILABLE);
            assertThat(e.getMessage()).contains("not permitted here");
          });
    }
  }
}
