package io.thallus.cli.sidebyside;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ComparisonTest {
  /** A peer that reports fixed times and a fixed checksum, and counts its pulls. */
  private static final class Fake implements Peer {
    private final String name;
    private final Kind kind;
    private final long checksum;
    private final long nanos;
    final AtomicInteger pulls = new AtomicInteger();
    final AtomicInteger verified = new AtomicInteger();

    Fake(String name, Kind kind, long checksum, long nanos) {
      this.name = name;
      this.kind = kind;
      this.checksum = checksum;
      this.nanos = nanos;
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public Kind kind() {
      return kind;
    }

    @Override
    public Pull pull(boolean verify, Progress progress) {
      pulls.incrementAndGet();
      if (verify) {
        verified.incrementAndGet();
      }
      return new Pull(nanos, 10, 2, 1_000, verify ? checksum : 0, -1, -1);
    }
  }

  @Test
  void verifiesOnceThenTimesEveryPeerAndFlagsTheOneWithOtherData() {
    Fake good = new Fake("good", Peer.Kind.TRANSPORT, 42, 2_000_000);
    Fake bad = new Fake("bad", Peer.Kind.PEER, 41, 1_000_000);
    Fake ceiling = new Fake("ceiling", Peer.Kind.CEILING, 0, 500_000);

    List<PeerResult> results = Comparison.run(List.of(good, bad, ceiling), 3, 42, null);

    assertThat(results).extracting(PeerResult::name).containsExactly("good", "bad", "ceiling");
    assertThat(results).extracting(PeerResult::matches).containsExactly(true, false, true);
    assertThat(results.get(2).checksum()).as("a ceiling's data is not checked").isNull();
    assertThat(good.pulls).hasValue(4);
    assertThat(good.verified).hasValue(1);
    assertThat(ceiling.verified).hasValue(0);
    assertThat(results.get(0).seconds()).containsExactly(0.002, 0.002, 0.002);
    assertThat(results.get(0).gigabytesPerSecond()).isEqualTo(1_000 / 0.002 / 1e9);
    assertThat(results.get(0).microsPerBatch()).isEqualTo(1_000.0);
    assertThat(results.get(0).perGigabyte(results.get(0).serverCpuSeconds())).isNaN();
  }

  @Test
  void percentilesAverageTheMiddleOfAnEvenCount() {
    PeerResult result = new PeerResult("p", Peer.Kind.TRANSPORT, 1L, true, 1, 1, 1, List.of(4.0, 1.0, 3.0, 2.0),
        0, -1, -1);
    assertThat(result.medianSeconds()).isEqualTo(2.5);
    assertThat(result.bestSeconds()).isEqualTo(1.0);
  }
}
