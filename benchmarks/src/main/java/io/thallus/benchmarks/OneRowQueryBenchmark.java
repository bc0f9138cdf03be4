package io.thallus.benchmarks;

import io.thallus.cli.sidebyside.Peer;
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
 * The latency of a one-row query end to end (DuckDB runs a point filter on a 1M-row table on every call), per
 * Thallus transport, Arrow Flight DoGet, and DuckDB in this process (the floor).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class OneRowQueryBenchmark {
  @Param({"ipc", "tcp", "shm", "cma", Fixture.FLIGHT, Fixture.DUCKDB})
  public String peer;

  private Fixture fixture;
  private Peer query;

  @Setup(Level.Trial)
  public void setUp() {
    fixture = new Fixture();
    fixture.execute("CREATE TABLE t AS SELECT i AS c0, i * 2 AS c1, i * 3 AS c2, i * 4 AS c3 FROM range(1000000) r(i)");
    String sql = "SELECT * FROM t WHERE c0 = 4242";
    query = switch (peer) {
      case Fixture.FLIGHT -> fixture.flight(sql, 65_536);
      case Fixture.DUCKDB -> fixture.inProcess(sql, 65_536);
      default -> {
        if (!fixture.transports().contains(peer)) {
          throw new IllegalStateException(peer + " is not available on this machine");
        }
        yield fixture.thallus(peer, sql, 65_536);
      }
    };
  }

  @Benchmark
  public long query() {
    long rows = query.pull(false, null).rows();
    if (rows != 1) {
      throw new IllegalStateException("the one-row query returned " + rows + " rows");
    }
    return rows;
  }

  @TearDown(Level.Trial)
  public void tearDown() throws Exception {
    fixture.close();
  }
}
