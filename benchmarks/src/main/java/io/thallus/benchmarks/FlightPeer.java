package io.thallus.benchmarks;

import io.thallus.cli.sidebyside.NamedPeer;
import io.thallus.cli.sidebyside.Peer;
import io.thallus.cli.sidebyside.Progress;
import io.thallus.cli.sidebyside.Pull;
import io.thallus.cli.sidebyside.Tally;
import io.thallus.spi.BatchContents;
import io.thallus.engine.QueryEngine;
import io.thallus.engine.QueryResult;
import io.thallus.engine.QuerySpec;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightServer;
import org.apache.arrow.flight.FlightProducer.ServerStreamListener;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.NoOpFlightProducer;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * Arrow Flight Java as its users run it: a Flight server whose DoGet streams what the same query engine as the
 * Thallus server produces (so prepared batches for the transport-only setting, DuckDB for end to end), and a
 * Flight client reading it over gRPC on loopback. Default Flight settings throughout: this is the peer a Thallus user
 * would otherwise pick, not a tuned one.
 */
final class FlightPeer implements AutoCloseable {
  /** How long DoGet waits for a client that stopped reading: a deadline, never forever. */
  private static final long STALL_MILLIS = TimeUnit.SECONDS.toMillis(60);

  private final FlightServer server;
  private final FlightClient client;

  FlightPeer(QueryEngine engine, BufferAllocator serverMemory, BufferAllocator clientMemory) {
    server = FlightServer.builder(serverMemory, Location.forGrpcInsecure("127.0.0.1", 0),
        new Producer(engine, serverMemory)).build();
    try {
      server.start();
    } catch (java.io.IOException e) {
      throw new IllegalStateException("cannot start the Flight server: " + e.getMessage(), e);
    }
    client = FlightClient.builder(clientMemory, Location.forGrpcInsecure("127.0.0.1", server.getPort())).build();
  }

  /** One DoGet of {@code sql} in batches of {@code batchRows}, as a peer in a comparison. */
  Peer query(String name, String sql, int batchRows) {
    Ticket ticket = new Ticket((batchRows + "\n" + sql).getBytes(StandardCharsets.UTF_8));
    return new NamedPeer(name, Peer.Kind.PEER) {
      @Override
      public Pull pull(boolean verify, Progress progress) {
        long start = System.nanoTime();
        Tally tally = new Tally(verify, progress);
        try (FlightStream stream = client.getStream(ticket)) {
          VectorSchemaRoot root = stream.getRoot();
          while (stream.next()) {
            tally.add(root);
          }
        } catch (Exception e) {
          throw new IllegalStateException("Flight DoGet failed: " + e.getMessage(), e);
        }
        // Bytes are the caller's: Flight does not report Arrow buffer bytes the way a Thallus stream does.
        return tally.pull(System.nanoTime() - start, 0, -1, -1);
      }
    };
  }

  @Override
  public void close() throws InterruptedException {
    try {
      client.close();
    } finally {
      server.shutdown();
      if (!server.awaitTermination(10, TimeUnit.SECONDS)) {
        server.close();
      }
    }
  }

  /**
   * Streams a query's batches to a DoGet as the engine yields them, waiting (with a deadline) while the client is
   * not ready, as Flight's own examples do. Shared by the Flight and Flight SQL servers.
   */
  static void stream(QueryEngine engine, BufferAllocator allocator, QuerySpec spec, ServerStreamListener listener) {
    Object readiness = new Object();
    listener.setOnReadyHandler(() -> {
      synchronized (readiness) {
        readiness.notifyAll();
      }
    });
    try (QueryResult result = engine.execute(spec, allocator);
         VectorSchemaRoot root = VectorSchemaRoot.create(result.schema(), allocator)) {
      listener.start(root);
      VectorLoader loader = new VectorLoader(root);
      BatchContents batch;
      while ((batch = result.next()) != null) {
        try (BatchContents held = batch) {
          loader.load(held.records());
        }
        if (!awaitReady(listener, readiness)) {
          listener.error(CallStatus.CANCELLED.withDescription("client not reading").toRuntimeException());
          return;
        }
        listener.putNext();
      }
      listener.completed();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      listener.error(CallStatus.CANCELLED.withDescription("interrupted").toRuntimeException());
    } catch (RuntimeException e) {
      listener.error(CallStatus.INTERNAL.withDescription(String.valueOf(e.getMessage())).withCause(e)
          .toRuntimeException());
    }
  }

  /**
   * Waits until gRPC can take another message, the client cancelled, or the deadline passed. Readiness is
   * re-checked every millisecond besides the on-ready wake-up: Flight's CallbackBackpressureStrategy missed a
   * wake-up here on a 10M-row result and waited out its whole timeout.
   */
  private static boolean awaitReady(ServerStreamListener listener, Object readiness) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(STALL_MILLIS);
    synchronized (readiness) {
      while (!listener.isReady()) {
        if (listener.isCancelled() || System.nanoTime() > deadline) {
          return false;
        }
        readiness.wait(1);
      }
    }
    return true;
  }

  /** DoGet: the ticket is {@code batchRows \n sql}. */
  private static final class Producer extends NoOpFlightProducer {
    private final QueryEngine engine;
    private final BufferAllocator allocator;

    Producer(QueryEngine engine, BufferAllocator allocator) {
      this.engine = engine;
      this.allocator = allocator;
    }

    @Override
    public void getStream(CallContext context, Ticket ticket, ServerStreamListener listener) {
      String text = new String(ticket.getBytes(), StandardCharsets.UTF_8);
      int newline = text.indexOf('\n');
      stream(engine, allocator, new QuerySpec(text.substring(newline + 1), Optional.empty(),
          Integer.parseInt(text.substring(0, newline)), Map.of()), listener);
    }
  }
}
