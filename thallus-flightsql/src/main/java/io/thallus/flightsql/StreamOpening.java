package io.thallus.flightsql;

import io.grpc.Context;
import io.thallus.QueryRequest;
import io.thallus.ThallusStream;
import org.apache.arrow.flight.CallStatus;

/**
 * Opens a DoGet's native stream, and gives up waiting for it when the DoGet's call ends. The native client's
 * {@code query} returns only once the server has opened the stream, which waits for its credential's turn (its
 * statements or memory used up); gRPC runs a call's own cancel handler only after the handler returns, so without this
 * a client that cancels, or drops its connection, would leave the DoGet (and its session) waiting until that turn or
 * the native client's timeout. Here the call's context, which learns of a cancel or a dropped connection at once,
 * interrupts the wait: the native client then closes the stream, and the server withdraws it from the queue.
 */
final class StreamOpening implements Context.CancellationListener {
  private final Thread opener = Thread.currentThread();
  // Guarded by this.
  private boolean waiting = true;
  private boolean interrupted;

  private StreamOpening() {}

  /** {@code request}'s stream in {@code session}, opened for the gRPC call this thread is answering. */
  static ThallusStream open(FlightSession session, QueryRequest request) {
    Context call = Context.current();
    if (call.isCancelled()) {
      throw cancelled();
    }
    StreamOpening opening = new StreamOpening();
    call.addListener(opening, Runnable::run);
    try {
      return session.client().query(request);
    } catch (RuntimeException e) {
      throw opening.finish() ? cancelled() : e;
    } finally {
      call.removeListener(opening);
      opening.finish();
    }
  }

  @Override
  public synchronized void cancelled(Context context) {
    if (waiting) {
      interrupted = true;
      opener.interrupt();
    }
  }

  /**
   * The wait is over: no interrupt comes after this, and one that came is cleared (the thread goes back to gRPC's
   * pool). Whether the call's cancel interrupted the wait. A stream opened as the call was cancelled is returned
   * anyway: the result's own cancel handling ends it.
   */
  private synchronized boolean finish() {
    waiting = false;
    if (interrupted) {
      Thread.interrupted();
    }
    return interrupted;
  }

  private static RuntimeException cancelled() {
    return CallStatus.CANCELLED.withDescription("the client cancelled the DoGet while its statement waited to start")
        .toRuntimeException();
  }
}
