package io.thallus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class LocationTest {
  @Test
  void parsesBestAndNamedTransports() {
    Location best = Location.parse("thallus://db.example:47470");
    assertThat(best.host()).isEqualTo("db.example");
    assertThat(best.port()).isEqualTo(47470);
    assertThat(best.transport()).isEmpty();
    Location tcp = Location.parse("thallus+tcp://127.0.0.1:9");
    assertThat(tcp.transport()).contains("tcp");
    assertThat(tcp.toString()).isEqualTo("thallus+tcp://127.0.0.1:9");
    assertThat(Location.parse(best.withTransport("ipc").toString())).isEqualTo(Location.of("db.example", 47470, "ipc"));
  }

  @Test
  void refusesWhatIsNotALocation() {
    assertThatThrownBy(() -> Location.parse("http://host:1")).hasMessageContaining("not a Thallus location");
    assertThatThrownBy(() -> Location.parse("thallus://host")).hasMessageContaining("needs host and port");
    assertThatThrownBy(() -> Location.parse("thallus+://host:1")).hasMessageContaining("empty transport");
    assertThatThrownBy(() -> Location.of("h", 70000)).hasMessageContaining("outside 0..65535");
  }
}
