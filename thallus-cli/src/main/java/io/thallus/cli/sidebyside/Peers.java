package io.thallus.cli.sidebyside;

import io.thallus.QueryRequest;
import io.thallus.ThallusClient;
import io.thallus.ThallusStream;
import io.thallus.spi.BatchContents;
import io.thallus.engine.QueryEngine;
import io.thallus.engine.QueryResult;
import io.thallus.engine.QuerySpec;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;

/** The peers every benchmark has: Thallus clients, the copy and socket ceilings, DuckDB read in-process. */
public final class Peers {
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  private Peers() {}

  /**
   * A query over a connected client. The client is the caller's (long-lived, as an application has it:
   * connecting is not what is timed). Server CPU is the stream thread's own (reported in END) plus the server's
   * event loops; client CPU the consumer's thread plus the client's own threads. Both sides must be in this JVM
   * for the split to mean anything.
   */
  public static Peer thallus(String name, ThallusClient client, QueryRequest request) {
    return new NamedPeer(name, Peer.Kind.TRANSPORT) {
      @Override
      public Pull pull(boolean verify, Progress progress) {
        long serverLoops = threadCpu("thallus-server-");
        long clientThreads = threadCpu("thallus-client-") + THREADS.getCurrentThreadCpuTime();
        long start = System.nanoTime();
        Tally tally = new Tally(verify, progress);
        try (ThallusStream stream = client.query(request)) {
          while (stream.hasNext()) {
            try (VectorSchemaRoot batch = stream.next()) {
              tally.add(batch);
            }
          }
          long elapsed = System.nanoTime() - start;
          long streamCpu = stream.stats().map(stats -> stats.serverCpuTime().toNanos()).orElse(0L);
          long bytes = stream.stats().map(stats -> stats.bytes()).orElse(stream.bytesRead());
          return tally.pull(elapsed, bytes, streamCpu + threadCpu("thallus-server-") - serverLoops,
              threadCpu("thallus-client-") + THREADS.getCurrentThreadCpuTime() - clientThreads);
        }
      }
    };
  }

  /**
   * A query run by an engine in this thread's process, batches read as they come: for DuckDB this is its own
   * Arrow export (the C Data Interface), the ceiling for anything that runs SQL in DuckDB and ships the result.
   */
  public static Peer inProcess(String name, Peer.Kind kind, QueryEngine engine, QuerySpec spec,
      BufferAllocator allocator) {
    return new NamedPeer(name, kind) {
      @Override
      public boolean verifies() {
        return true;
      }

      @Override
      public Pull pull(boolean verify, Progress progress) {
        long start = System.nanoTime();
        long bytes = 0;
        Tally tally = new Tally(verify, progress);
        try (QueryResult result = engine.execute(spec, allocator);
             VectorSchemaRoot root = verify ? VectorSchemaRoot.create(result.schema(), allocator) : null) {
          BatchContents batch;
          while ((batch = result.next()) != null) {
            try (BatchContents held = batch) {
              bytes += held.bufferBytes();
              if (root != null) {
                // Only for verification: loading retains the buffers into a root the checksum can read.
                new VectorLoader(root).load(held.records());
                tally.add(root);
              } else {
                tally.add(held.rowCount());
              }
            }
          }
        }
        return tally.pull(System.nanoTime() - start, bytes, -1, -1);
      }
    };
  }

  /** The memory ceiling: one thread copying the prepared buffers once into reused, faulted-in memory. */
  public static Peer memcpy(List<BatchContents> prepared) {
    MemcpyBaseline memcpy = new MemcpyBaseline(prepared);
    return ceiling("memcpy", prepared, memcpy::copySeconds, memcpy);
  }

  /** The TCP ceiling: the prepared buffers over a plain loopback socket, one gathering write per batch. */
  public static Peer rawSocket(List<BatchContents> prepared) {
    RawSocketBaseline raw = new RawSocketBaseline(prepared);
    return ceiling("raw socket", prepared, raw::transferSeconds, raw);
  }

  private interface Timed {
    double seconds();
  }

  private static Peer ceiling(String name, List<BatchContents> prepared, Timed timed, AutoCloseable resource) {
    long rows = prepared.stream().mapToLong(BatchContents::rowCount).sum();
    long bytes = prepared.stream().mapToLong(BatchContents::bufferBytes).sum();
    return new NamedPeer(name, Peer.Kind.CEILING) {
      @Override
      public Pull pull(boolean verify, Progress progress) {
        long nanos = (long) (timed.seconds() * 1e9);
        if (progress != null) {
          progress.advance(rows);
        }
        return new Pull(nanos, rows, prepared.size(), bytes, 0, -1, -1);
      }

      @Override
      public void close() {
        try {
          resource.close();
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      }
    };
  }

  /** A query spec with no dataset, parameters or options. */
  public static QuerySpec spec(String sql, int batchRows) {
    return new QuerySpec(sql, Optional.empty(), batchRows, Map.of());
  }

  /** CPU time of the live threads whose names start with {@code prefix} (stream threads report their own). */
  static long threadCpu(String prefix) {
    long total = 0;
    // Thread infos without stacks: taking every thread's stack between pulls would disturb what is measured.
    for (ThreadInfo info : THREADS.getThreadInfo(THREADS.getAllThreadIds())) {
      if (info != null && info.getThreadName().startsWith(prefix)
          && !info.getThreadName().startsWith("thallus-server-stream-")
          // A producer's CPU is in its stream's END already, as the stream thread's is.
          && !info.getThreadName().startsWith("thallus-server-produce-")) {
        total += Math.max(0, THREADS.getThreadCpuTime(info.getThreadId()));
      }
    }
    return total;
  }
}
