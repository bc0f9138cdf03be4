package io.thallus.flightsql;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStream;

/**
 * The wait for a DoPut's first message, the descriptor naming its command, bounded by a deadline. Arrow's
 * {@link FlightStream#getDescriptor()} waits with none, so a client that opens a DoPut and sends nothing would hold
 * the handler's thread, its call and with them its connection and session for as long as it likes. At the deadline
 * a timer interrupts the waiting thread (which {@code getDescriptor} turns into an error), and the call is answered
 * {@code TIMED_OUT} naming the missing descriptor, which ends it on the server.
 */
final class PutDescriptors implements AutoCloseable {
  private final Duration timeout;
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(runnable -> {
    Thread thread = new Thread(runnable, "thallus-flightsql-put-deadline");
    thread.setDaemon(true);
    return thread;
  });

  PutDescriptors(Duration timeout) {
    this.timeout = timeout;
  }

  /** The DoPut's descriptor, once it came; {@code TIMED_OUT} if it did not come within the timeout. */
  FlightDescriptor await(FlightStream stream) {
    Wait wait = new Wait(Thread.currentThread());
    ScheduledFuture<?> alarm = timer.schedule(wait::expire, timeout.toNanos(), TimeUnit.NANOSECONDS);
    try {
      return stream.getDescriptor();
    } catch (FlightRuntimeException e) {
      if (wait.expired()) {
        throw CallStatus.TIMED_OUT.withDescription("no FlightDescriptor (the DoPut's first message, naming its "
            + "command) arrived within " + timeout.toMillis() + " ms of the DoPut's start").toRuntimeException();
      }
      throw e;
    } finally {
      alarm.cancel(false);
      if (wait.finish()) {
        // The alarm interrupted this thread: the interrupt was for the wait alone, not for the executor's thread.
        Thread.interrupted();
      }
    }
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }

  /** One DoPut's wait: the alarm interrupts its thread only while it still waits, never the work after it. */
  private static final class Wait {
    private final Thread waiter;
    private boolean waiting = true;
    private boolean expired;

    Wait(Thread waiter) {
      this.waiter = waiter;
    }

    synchronized void expire() {
      if (waiting) {
        expired = true;
        waiter.interrupt();
      }
    }

    synchronized boolean expired() {
      return expired;
    }

    /** Ends the wait; true if the alarm interrupted it. */
    synchronized boolean finish() {
      waiting = false;
      return expired;
    }
  }
}
