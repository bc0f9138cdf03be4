package io.thallus.flightsql;

import io.thallus.ThallusStream;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.flight.FlightProducer.ServerStreamListener;

/**
 * The door's DoGet results in flight: each goes out as its client reads it, on gRPC's on-ready callbacks
 * ({@link ResultSender}), so no thread waits for a slow client; one timer ends those whose client stopped reading.
 */
final class ResultStreams implements AutoCloseable {
  /** How long a result waits for a client that reads nothing before the server gives up on it. */
  private static final long STALL_MILLIS = TimeUnit.MINUTES.toMillis(5);

  /** Checks results whose client stopped reading (see {@link ResultSender}). */
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(runnable -> {
    Thread thread = new Thread(runnable, "thallus-flightsql-results");
    thread.setDaemon(true);
    return thread;
  });
  private final AtomicInteger sending = new AtomicInteger();
  /** The most bytes one message of a result may take (see {@link ResultMessages}). */
  private final long maxMessageBytes;

  ResultStreams(long maxMessageBytes) {
    this.maxMessageBytes = maxMessageBytes;
  }

  /** Sends a stream's batches as the client reads them; {@code onEnd} runs once when the result ends, however. */
  void send(ThallusStream stream, FlightSession session, ServerStreamListener listener, Runnable onEnd) {
    sending.incrementAndGet();
    new ResultSender(stream, session, listener, STALL_MILLIS, maxMessageBytes, () -> {
      sending.decrementAndGet();
      onEnd.run();
    }).start(timer);
  }

  /** Results being sent now (each a DoGet, whether its client reads or not). */
  int inFlight() {
    return sending.get();
  }

  @Override
  public void close() {
    // The results themselves end with their sessions, which the server closes.
    timer.shutdownNow();
  }
}
