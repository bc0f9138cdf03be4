package io.thallus.internal.server;

import io.thallus.Status;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.internal.protocol.Message;
import io.thallus.spi.BatchContents;
import io.thallus.spi.CancelSignal;
import io.thallus.spi.Deadline;
import io.thallus.spi.QueryResult;
import io.thallus.spi.QuerySpec;
import io.thallus.spi.ServerSession;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One result stream on the server, run on its own thread: execute the query, send OPENED, then send a batch for
 * every credit the client grants, then END — or ERROR with the reason, whatever stops it.
 */
final class ServerStream implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(ServerStream.class);
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  private final ServerConnectionHandler connection;
  private final ServerContext context;
  private final ServerSession session;
  private final int id;
  private final QuerySpec spec;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private int credits;
  private Status abortStatus;
  private boolean answerAbort;
  private final CancelSignal cancelSignal = new CancelSignal();
  private volatile QueryResult result;
  private volatile ScheduledFuture<?> timeout;

  ServerStream(ServerConnectionHandler connection, ServerContext context, ServerSession session, int id,
      QuerySpec spec, int initialCredits) {
    this.connection = connection;
    this.context = context;
    this.session = session;
    this.id = id;
    this.spec = spec;
    this.credits = initialCredits;
  }

  int id() {
    return id;
  }

  void grant(int more) {
    lock.lock();
    try {
      credits = (int) Math.min(Integer.MAX_VALUE, (long) credits + Math.max(0, more));
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /** Stops the stream; the first reason wins. {@code answer}: whether the client is told (it is gone, or closed). */
  void abort(Status status, boolean answer) {
    lock.lock();
    try {
      if (abortStatus == null) {
        abortStatus = status;
        answerAbort = answer;
      }
      changed.signalAll();
    } finally {
      lock.unlock();
    }
    cancelSignal.cancel();
    QueryResult running = result;
    if (running != null) {
      running.cancel();
    }
  }

  @Override
  public void run() {
    long start = System.nanoTime();
    long cpuStart = THREADS.getCurrentThreadCpuTime();
    long rows = 0;
    long batches = 0;
    long bytes = 0;
    Status failure = null;
    try {
      throwIfAborted();
      result = context.engine().execute(spec, connection.allocator(), cancelSignal);
      throwIfAborted();
      connection.send(new Message.Opened(id, result.schema().serializeAsMessage()));
      if (spec.schemaOnly()) {
        connection.send(new Message.End(id, 0, 0, 0, System.nanoTime() - start,
            THREADS.getCurrentThreadCpuTime() - cpuStart));
        return;
      }
      while (true) {
        awaitCredit();
        BatchContents batch = result.next();
        if (batch == null) {
          connection.send(new Message.End(id, rows, batches, bytes, System.nanoTime() - start,
              THREADS.getCurrentThreadCpuTime() - cpuStart));
          return;
        }
        rows += batch.rowCount();
        bytes += batch.bufferBytes();
        takeCredit();
        session.send(id, batches++, batch, connection.controlWriter(), Deadline.after(context.ioTimeout()));
      }
    } catch (ThallusException e) {
      failure = e.status();
    } catch (RuntimeException | Error e) {
      LOG.error("stream {} failed", id, e);
      failure = Status.of(StatusCode.INTERNAL, "server error: " + e).withCause(e);
    } finally {
      failure = finish(failure);
    }
  }

  private Status finish(Status failure) {
    boolean answer = true;
    lock.lock();
    try {
      if (abortStatus != null) {
        // A cancelled query fails inside the engine with the engine's words; the reason is the abort's.
        failure = abortStatus;
        answer = answerAbort;
      }
    } finally {
      lock.unlock();
    }
    if (failure != null && answer) {
      connection.send(new Message.Error(id, failure.code(), failure.description()));
    }
    ScheduledFuture<?> pendingTimeout = timeout;
    if (pendingTimeout != null) {
      pendingTimeout.cancel(false);
    }
    QueryResult running = result;
    if (running != null) {
      running.close();
    }
    session.streamClosed(id);
    connection.streamDone(this);
    return failure;
  }

  /** Waits until the client grants a batch, the stream is aborted, or it has been idle too long. */
  private void awaitCredit() {
    Deadline idle = Deadline.after(context.idleTimeout());
    lock.lock();
    try {
      while (credits == 0 && abortStatus == null) {
        long left = idle.remainingNanos();
        if (left == 0) {
          throw ThallusException.of(StatusCode.DEADLINE_EXCEEDED, "stream " + id + " was idle for "
              + context.idleTimeout().toSeconds() + " s: the client asked for no batch");
        }
        changed.awaitNanos(left);
      }
      throwIfAborted();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw ThallusException.of(StatusCode.CANCELLED, "stream thread interrupted");
    } finally {
      lock.unlock();
    }
  }

  private void takeCredit() {
    lock.lock();
    try {
      credits--;
    } finally {
      lock.unlock();
    }
  }

  private void throwIfAborted() {
    lock.lock();
    try {
      if (abortStatus != null) {
        throw abortStatus.toException();
      }
    } finally {
      lock.unlock();
    }
  }

  /** Schedules the query's own deadline, if it has one. */
  void scheduleTimeout(long timeoutMillis) {
    if (timeoutMillis > 0) {
      timeout = context.timers().schedule(
          () -> abort(Status.of(StatusCode.DEADLINE_EXCEEDED,
              "query ran past its timeout of " + timeoutMillis + " ms"), true),
          timeoutMillis, TimeUnit.MILLISECONDS);
    }
  }
}
