package io.thallus.flightsql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.Location;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The lanes' announcement in an endpoint's app metadata: what a server writes, what a Thallus client takes. */
class LaneAnnouncementTest {
  private static final Location SHM = Location.of("127.0.0.1", 47470, "shm");
  private static final Location TCP = Location.of("127.0.0.1", 47470, "tcp");
  private static final Location IPC = Location.of("127.0.0.1", 47470, "ipc");

  private static byte[] text(String value) {
    return value.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void lanesGoThereAndBackInTheServersOrder() {
    byte[] metadata = LaneAnnouncement.encode(List.of(SHM, TCP, IPC), false);
    assertThat(new String(metadata, StandardCharsets.UTF_8)).isEqualTo("thallus-lanes/1\n"
        + "thallus+shm://127.0.0.1:47470\nthallus+tcp://127.0.0.1:47470\nthallus+ipc://127.0.0.1:47470\n");
    assertThat(LaneAnnouncement.decode(metadata)).contains(List.of(SHM, TCP, IPC));
    assertThat(LaneAnnouncement.encode(List.of(), false)).isEmpty();
  }

  @Test
  void anotherServersMetadataIsNoLane() {
    assertThat(LaneAnnouncement.decode(null)).isEmpty();
    assertThat(LaneAnnouncement.decode(new byte[0])).isEmpty();
    assertThat(LaneAnnouncement.decode(text("thallus+shm://127.0.0.1:1\n"))).isEmpty();
    assertThat(LaneAnnouncement.decode(text("{\"partition\": 3}"))).isEmpty();
    assertThat(LaneAnnouncement.decode(text("thallus-lanes/1\n"))).isEmpty();
  }

  @Test
  void aMalformedAnnouncementIsAnErrorNamingWhy() {
    assertThatThrownBy(() -> LaneAnnouncement.decode(text("thallus-lanes/1\ngrpc://127.0.0.1:1\n")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("bad line")
        .hasMessageContaining("grpc://127.0.0.1:1");
    assertThatThrownBy(() -> LaneAnnouncement.decode(text("thallus-lanes/1\nthallus://127.0.0.1:1\n")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("without a transport");
    assertThatThrownBy(() -> LaneAnnouncement.decode(text("thallus-lanes/1\n"
        + "thallus+shm://127.0.0.1:1\n".repeat(LaneAnnouncement.MAX_LANES + 1))))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("more than 16 lanes");
    assertThatThrownBy(() -> LaneAnnouncement.decode(text("thallus-lanes/1\n" + "x".repeat(5000))))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("more than 4096");
  }

  @Test
  void underTlsOnlyTransportsWhoseBodiesStayProtectedAreAnnounced() {
    assertThat(LaneAnnouncement.decode(LaneAnnouncement.encode(List.of(SHM, IPC), true))).contains(List.of(SHM, IPC));
    assertThatThrownBy(() -> LaneAnnouncement.encode(List.of(SHM, TCP), true))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("thallus+tcp://127.0.0.1:47470")
        .hasMessageContaining("outside TLS");
    assertThatThrownBy(() -> LaneAnnouncement.encode(List.of(Location.of("127.0.0.1", 1, "rdma")), true))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("rdma");
    assertThatThrownBy(() -> LaneAnnouncement.encode(List.of(Location.of("127.0.0.1", 1)), false))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("names no transport");
  }
}
