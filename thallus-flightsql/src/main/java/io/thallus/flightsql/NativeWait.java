package io.thallus.flightsql;

import io.grpc.Context;
import java.util.function.Supplier;
import org.apache.arrow.flight.CallStatus;

/**
 * A Flight call's wait on its session's native connection, given up when the call ends. The native client returns
 * only once the server has answered (a statement described, a stream or an ingest opened), which waits for the
 * client's credential's turn (its statements or memory used up by its other streams) up to the native client's
 * timeout; gRPC runs a call's own cancel handler only after the handler returns, so without this a client that
 * cancels, lets its deadline pass or drops its connection would leave its call (its thread, its connection and its
 * session) waiting until that turn or that timeout. Here the call's context, which learns of a cancel, a deadline or a
 * dropped connection at once, interrupts the wait: the native client then closes what it opened, and the server
 * withdraws it from the queue.
 */
final class NativeWait implements Context.CancellationListener {
  private final Thread waiter = Thread.currentThread();
  // Guarded by this.
  private boolean waiting = true;
  private boolean interrupted;

  private NativeWait() {}

  /** What {@code work} answers, for the gRPC call this thread is answering; CANCELLED once that call has ended. */
  static <T> T run(Supplier<T> work) {
    Context call = Context.current();
    if (call.isCancelled()) {
      throw cancelled();
    }
    NativeWait wait = new NativeWait();
    call.addListener(wait, Runnable::run);
    try {
      return work.get();
    } catch (RuntimeException e) {
      throw wait.finish() ? cancelled() : e;
    } finally {
      call.removeListener(wait);
      wait.finish();
    }
  }

  @Override
  public synchronized void cancelled(Context context) {
    if (waiting) {
      interrupted = true;
      waiter.interrupt();
    }
  }

  /**
   * The wait is over: no interrupt comes after this, and one that came is cleared (the thread goes back to gRPC's
   * pool). Whether the call's end interrupted the wait. What was opened as the call ended is returned anyway: the
   * caller's own cancel handling ends it.
   */
  private synchronized boolean finish() {
    waiting = false;
    if (interrupted) {
      Thread.interrupted();
    }
    return interrupted;
  }

  private static RuntimeException cancelled() {
    return CallStatus.CANCELLED.withDescription("the call ended (cancelled by the client, past its deadline, or its "
        + "connection gone) while it waited for the server to take its statement").toRuntimeException();
  }
}
