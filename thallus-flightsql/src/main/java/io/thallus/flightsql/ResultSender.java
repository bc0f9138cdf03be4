package io.thallus.flightsql;

import io.thallus.ThallusStream;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightProducer.ServerStreamListener;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;

/**
 * Sends one native result to a DoGet as fast as its client reads, and no faster: a batch is taken from the native
 * stream only while gRPC will take another message ({@code isReady}), on gRPC's on-ready callbacks. While the client
 * reads nothing, no thread waits for it, and the result holds what the native stream's credits let the server send
 * ahead plus the one message gRPC is writing, all in the session's memory (its {@code memoryPerClient}). A client that
 * reads nothing for the stall timeout, or cancels, ends the native stream.
 *
 * <p>Each batch is loaded into the one root gRPC sends from, without a copy: as one message when it fits the message
 * limit, as row ranges that each fit otherwise ({@link ResultMessages}). Dictionary-encoded columns (DuckDB's ENUMs)
 * go out decoded, as their values: Flight SQL's JDBC driver reads a dictionary column as its indices.
 */
final class ResultSender implements AutoCloseable {
  private final ThallusStream stream;
  private final BufferAllocator allocator;
  private final ServerStreamListener listener;
  private final FlightSession session;
  private final long stallNanos;
  private final long maxMessageBytes;
  /** Runs once when the result ends, however it ends. */
  private final Runnable onEnd;
  // Guarded by this.
  private VectorSchemaRoot out;
  private VectorLoader loader;
  /** The batch being sent, while rows of it remain (one message each; see {@link ResultMessages}). */
  private ResultMessages batch;
  private boolean ended;
  private ScheduledFuture<?> stallCheck;
  private volatile long progressNanos = System.nanoTime();
  private volatile boolean sending;

  ResultSender(ThallusStream stream, FlightSession session, ServerStreamListener listener, long stallMillis,
      long maxMessageBytes, Runnable onEnd) {
    this.maxMessageBytes = maxMessageBytes;
    this.stream = stream;
    this.allocator = session.allocator();
    this.session = session;
    this.listener = listener;
    this.stallNanos = TimeUnit.MILLISECONDS.toNanos(stallMillis);
    this.onEnd = onEnd;
  }

  /** Sends what the client is ready for, and the rest on gRPC's callbacks; returns without waiting for the client. */
  void start(ScheduledExecutorService timer) {
    session.sending(this);
    listener.setOnCancelHandler(() -> fail(CallStatus.CANCELLED.withDescription("the client cancelled")));
    // gRPC runs the cancel handler after this call's handler returns, and the first send below may wait in it for the
    // native stream's first batch (its credential's memory or statements used up): the call's context learns of a
    // cancel or a dropped connection at once, and cancelling the native stream ends that wait.
    io.grpc.Context.current().addListener(cancelled -> stream.cancel(), Runnable::run);
    listener.setOnReadyHandler(this::send);
    synchronized (this) {
      long period = Math.max(1, TimeUnit.NANOSECONDS.toMillis(stallNanos) / 4);
      stallCheck = timer.scheduleWithFixedDelay(this::checkStall, period, period, TimeUnit.MILLISECONDS);
    }
    send();
  }

  /** Sends batches while gRPC takes them; the last one sent completes the call. */
  private synchronized void send() {
    if (ended) {
      return;
    }
    sending = true;
    try {
      if (out == null && stream.getSchema().getFields().stream().noneMatch(field -> field.getDictionary() != null)) {
        begin(VectorSchemaRoot.create(stream.getSchema(), allocator));
      }
      while (!ended && listener.isReady()) {
        if (listener.isCancelled()) {
          fail(CallStatus.CANCELLED.withDescription("the client cancelled"));
          return;
        }
        if (batch == null && !stream.hasNext()) {
          if (out == null) {
            begin(VectorSchemaRoot.create(DecodedBatch.schema(stream.getSchema()), allocator));
          }
          listener.completed();
          end();
          return;
        }
        if (batch == null) {
          batch = new ResultMessages(stream.next(), stream, maxMessageBytes);
        }
        try (ArrowRecordBatch records = batch.nextMessage()) {
          if (out == null) {
            begin(VectorSchemaRoot.create(batch.root().getSchema(), allocator));
          }
          loader.load(records);
        }
        if (batch.done()) {
          batch.close();
          batch = null;
        }
        listener.putNext();
        progressNanos = System.nanoTime();
        session.touch();
      }
    } catch (RuntimeException e) {
      if (!ended) {
        listener.error(FlightErrors.of(e));
        end();
      }
    } finally {
      sending = false;
      progressNanos = System.nanoTime();
    }
  }

  private void begin(VectorSchemaRoot root) {
    out = root;
    loader = new VectorLoader(out);
    listener.start(out);
  }

  private void checkStall() {
    if (!sending && System.nanoTime() - progressNanos > stallNanos) {
      fail(CallStatus.CANCELLED.withDescription("the client read nothing for "
          + TimeUnit.NANOSECONDS.toSeconds(stallNanos) + " s"));
    }
  }

  /** Ends the result with {@code status}: the native stream stops, and its memory returns. */
  private void fail(CallStatus status) {
    // Cancel first, outside the lock: a send blocked on the native stream then returns.
    stream.cancel();
    synchronized (this) {
      if (ended) {
        return;
      }
      listener.error(status.toRuntimeException());
      end();
    }
  }

  /** Ends the result early: its session is closing. */
  @Override
  public void close() {
    fail(CallStatus.CANCELLED.withDescription("the Flight SQL session ended"));
  }

  private void end() {
    ended = true;
    session.sent(this);
    if (stallCheck != null) {
      stallCheck.cancel(false);
    }
    try {
      if (batch != null) {
        batch.close();
        batch = null;
      }
      stream.close();
    } finally {
      if (out != null) {
        out.close();
      }
      onEnd.run();
    }
  }
}
