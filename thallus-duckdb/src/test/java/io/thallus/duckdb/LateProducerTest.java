package io.thallus.duckdb;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.thallus.Location;
import io.thallus.QueryRequest;
import io.thallus.ThallusClient;
import io.thallus.ThallusStream;
import io.thallus.engine.CancelSignal;
import io.thallus.engine.EngineSession;
import io.thallus.engine.QueryEngine;
import io.thallus.engine.QueryResult;
import io.thallus.engine.QuerySpec;
import io.thallus.server.Overlap;
import io.thallus.server.ThallusServer;
import io.thallus.spi.BatchContents;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A producer thread that the engine does not stop within the I/O timeout (a batch still being made when its client
 * has gone) keeps its connection's engine session and memory open: they close only once it has returned and its
 * result has closed, never under it. Real DuckDB, real server and client; the engine's second batch of each result
 * is held back until the test lets it go, whatever the engine is told, as a stuck engine call would be.
 */
@Timeout(120)
class LateProducerTest {
  private final CountDownLatch producing = new CountDownLatch(1);
  private final CountDownLatch letGo = new CountDownLatch(1);
  private final AtomicInteger inNext = new AtomicInteger();
  private final AtomicBoolean sessionClosedUnderProducer = new AtomicBoolean();
  private final AtomicBoolean resultClosedUnderProducer = new AtomicBoolean();
  private final AtomicBoolean sessionClosed = new AtomicBoolean();

  @Test
  void theSessionOfAStreamWhoseProducerDidNotStopClosesOnlyOnceItHasReturned() throws Exception {
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    try (BufferAllocator allocator = new RootAllocator();
         ThallusServer server = ThallusServer.builder(allocator, Location.of("127.0.0.1", 0),
                 new HeldSecondBatch(DuckDBEngine.create()))
             .overlap(Overlap.producers(1)).ioTimeout(Duration.ofSeconds(1)).meterRegistry(meters).build().start()) {
      ThallusClient client = ThallusClient.connect(allocator, server.getLocation().withTransport("tcp"));
      try {
        ThallusStream stream = client.query(QueryRequest.builder("SELECT i FROM range(200000) t(i)").batchRows(1024)
            .build());
        try (VectorSchemaRoot first = stream.next()) {
          assertThat(first.getRowCount()).isEqualTo(1024);
        }
        assertThat(producing.await(30, TimeUnit.SECONDS)).as("the second batch is being made").isTrue();
      } finally {
        // The client goes while its stream's producer is inside the engine.
        client.close();
      }
      // The stream finishes without its producer (it waits the I/O timeout for it in vain).
      await("the stream is done", () -> meters.get("thallus.streams.open").gauge().value() == 0);
      assertThat(sessionClosed).as("the session stays open while its producer runs").isFalse();
      letGo.countDown();
      await("the session closes once the producer has returned", sessionClosed::get);
      assertThat(sessionClosedUnderProducer).as("session closed under a running producer").isFalse();
      assertThat(resultClosedUnderProducer).as("result closed under a running producer").isFalse();
      await("the connection's memory is freed", () -> server.memoryUse().allocatedBytes() == 0);
    } finally {
      letGo.countDown();
    }
  }

  private static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("waited 60 s in vain: " + what);
      }
      Thread.sleep(10);
    }
  }

  /** DuckDB, with each result's second batch held until the test lets it go; it records what closed meanwhile. */
  private final class HeldSecondBatch implements QueryEngine {
    private final DuckDBEngine engine;

    HeldSecondBatch(DuckDBEngine engine) {
      this.engine = engine;
    }

    @Override
    public QueryResult execute(QuerySpec spec, BufferAllocator allocator) {
      return engine.execute(spec, allocator);
    }

    @Override
    public EngineSession openSession() {
      DuckDBSession session = engine.openSession();
      return new EngineSession() {
        @Override
        public QueryResult execute(QuerySpec spec, BufferAllocator allocator, CancelSignal cancel) {
          return new HeldResult(session.execute(spec, allocator, cancel));
        }

        @Override
        public void close() {
          if (inNext.get() > 0) {
            sessionClosedUnderProducer.set(true);
          }
          session.close();
          sessionClosed.set(true);
        }
      };
    }

    @Override
    public void close() {
      engine.close();
    }
  }

  private final class HeldResult implements QueryResult {
    private final QueryResult result;
    private int calls;

    HeldResult(QueryResult result) {
      this.result = result;
    }

    @Override
    public Schema schema() {
      return result.schema();
    }

    @Override
    public BatchContents next() {
      inNext.incrementAndGet();
      try {
        if (++calls == 2) {
          producing.countDown();
          try {
            // Deaf to the engine's cancel, as a stuck engine call would be.
            letGo.await(60, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
        return result.next();
      } finally {
        inNext.decrementAndGet();
      }
    }

    @Override
    public void cancel() {
      result.cancel();
    }

    @Override
    public void close() {
      if (inNext.get() > 0) {
        resultClosedUnderProducer.set(true);
      }
      result.close();
    }
  }
}
