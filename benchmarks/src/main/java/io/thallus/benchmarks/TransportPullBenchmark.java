package io.thallus.benchmarks;

import io.thallus.cli.sidebyside.Peer;
import io.thallus.cli.sidebyside.Peers;
import io.thallus.spi.BatchContents;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Transport only, under JMH: one whole pull of a result prepared in server memory (8 BIGINT columns), per Thallus
 * transport, Arrow Flight DoGet, and the raw socket and memcpy ceilings. Time per pull; GB/s is
 * {@code rows * 65 bytes / time} (8 values plus validity bits per row). A peer this machine lacks (cma without
 * ptrace permission, rdma without a device) fails its setup and is reported as such.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class TransportPullBenchmark {
  @Param({"ipc", "tcp", "shm", "cma", Fixture.FLIGHT, "raw socket", "memcpy"})
  public String peer;

  @Param("1000000")
  public long rows;

  @Param("65536")
  public int batchRows;

  private Fixture fixture;
  private Peer pull;

  @Setup(Level.Trial)
  public void setUp() {
    fixture = new Fixture();
    String sql = "SELECT i AS c0, i * 2 AS c1, i * 3 AS c2, i * 4 AS c3, i * 5 AS c4, i * 6 AS c5, i * 7 AS c6, "
        + "i * 8 AS c7 FROM range(" + rows + ") t(i)";
    List<BatchContents> prepared = fixture.prepare(sql, batchRows);
    pull = switch (peer) {
      case Fixture.FLIGHT -> fixture.flight(sql, batchRows);
      case "raw socket" -> Peers.rawSocket(prepared);
      case "memcpy" -> Peers.memcpy(prepared);
      default -> {
        if (!fixture.transports().contains(peer)) {
          throw new IllegalStateException(peer + " is not available on this machine");
        }
        yield fixture.thallus(peer, sql, batchRows);
      }
    };
  }

  @Benchmark
  public long pull() {
    return pull.pull(false, null).rows();
  }

  @TearDown(Level.Trial)
  public void tearDown() throws Exception {
    try (Fixture closing = fixture) {
      if (pull != null) {
        pull.close();
      }
    }
  }
}
