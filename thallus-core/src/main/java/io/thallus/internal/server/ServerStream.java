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
import org.apache.arrow.memory.BufferAllocator;
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
      long nextBatchBytes = fixedWidthBytes(result.schema(), spec.batchRows());
      while (true) {
        awaitCredit();
        awaitHeadroom(nextBatchBytes);
        BatchContents batch = result.next();
        if (batch == null) {
          connection.send(new Message.End(id, rows, batches, bytes, System.nanoTime() - start,
              THREADS.getCurrentThreadCpuTime() - cpuStart));
          return;
        }
        rows += batch.rowCount();
        bytes += batch.bufferBytes();
        nextBatchBytes = Math.max(nextBatchBytes, batch.bufferBytes());
        takeCredit();
        session.send(id, batches++, batch, connection.controlWriter(), Deadline.after(context.ioTimeout()));
      }
    } catch (ThallusException e) {
      failure = e.status();
    } catch (RuntimeException | Error e) {
      failure = budgetExhausted(e);
      if (failure != null) {
        return;
      }
      LOG.error("stream {} failed", id, e);
      failure = Status.of(StatusCode.INTERNAL, "server error: " + e).withCause(e);
    } finally {
      failure = finish(failure);
    }
  }

  /**
   * Waits until the memory budgets (this client's, and the server's over all clients) have room for the next batch.
   * Importing a batch that does not fit fails halfway through, inside Arrow's C data import, and leaks what it had
   * imported; so a batch is only asked for when it fits. One that could never fit fails at once; otherwise the wait
   * ends at the I/O deadline.
   */
  private void awaitHeadroom(long needed) {
    BufferAllocator memory = connection.allocator();
    if (memory.getHeadroom() >= needed) {
      return;
    }
    long budget = memory.getParentAllocator() == null ? memory.getLimit()
        : Math.min(memory.getLimit(), memory.getParentAllocator().getLimit());
    if (needed > budget) {
      String which = budget == memory.getLimit() ? "this client's memory budget (memoryPerClient)"
          : "the server's memory budget (memoryLimit)";
      throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, which + " is too small: a batch of "
          + spec.batchRows() + " rows needs about " + needed + " bytes and the budget is " + budget
          + "; ask for smaller batches");
    }
    Deadline deadline = Deadline.after(context.ioTimeout());
    while (memory.getHeadroom() < needed) {
      throwIfAborted();
      if (deadline.isExpired()) {
        throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, budgetName(memory) + " is used up: the next "
            + "batch needs about " + needed + " bytes, " + memory.getHeadroom() + " are free after waiting "
            + context.ioTimeout().toSeconds() + " s for batches to be released");
      }
      lock.lock();
      try {
        // Released batches free memory without signalling this stream: look again shortly.
        changed.await(5, TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw ThallusException.of(StatusCode.CANCELLED, "stream thread interrupted");
      } finally {
        lock.unlock();
      }
    }
  }

  /** Which budget is short: this client's own ({@code memoryPerClient}) or the server's over all clients. */
  private static String budgetName(BufferAllocator connectionMemory) {
    BufferAllocator server = connectionMemory.getParentAllocator();
    boolean ownIsShort = server == null
        || connectionMemory.getLimit() - connectionMemory.getAllocatedMemory() <= server.getHeadroom();
    return ownIsShort ? "this client's memory budget (memoryPerClient, " + connectionMemory.getLimit() + " bytes)"
        : "the server's memory budget (memoryLimit, " + server.getLimit() + " bytes)";
  }

  /** The bytes a batch's fixed-width buffers take (variable-width data comes on top): a floor for the estimate. */
  private static long fixedWidthBytes(org.apache.arrow.vector.types.pojo.Schema schema, int rows) {
    long bytes = 0;
    for (org.apache.arrow.vector.types.pojo.Field field : schema.getFields()) {
      bytes += fixedWidthBytes(field, rows);
    }
    return bytes;
  }

  private static long fixedWidthBytes(org.apache.arrow.vector.types.pojo.Field field, int rows) {
    long validity = (rows + 7L) / 8;
    long values = switch (field.getType()) {
      case org.apache.arrow.vector.types.pojo.ArrowType.Int t -> (long) rows * t.getBitWidth() / 8;
      case org.apache.arrow.vector.types.pojo.ArrowType.FloatingPoint t -> rows * 8L;
      case org.apache.arrow.vector.types.pojo.ArrowType.Decimal t -> rows * (long) t.getBitWidth() / 8;
      case org.apache.arrow.vector.types.pojo.ArrowType.Date t -> rows * 8L;
      case org.apache.arrow.vector.types.pojo.ArrowType.Time t -> rows * 8L;
      case org.apache.arrow.vector.types.pojo.ArrowType.Timestamp t -> rows * 8L;
      case org.apache.arrow.vector.types.pojo.ArrowType.Utf8 t -> rows * 4L;
      case org.apache.arrow.vector.types.pojo.ArrowType.Binary t -> rows * 4L;
      default -> 0;
    };
    return validity + values;
  }

  /** An allocation refused by the server's memory budget, anywhere below: a clear error, not an internal one. */
  private static Status budgetExhausted(Throwable error) {
    for (Throwable cause = error; cause != null; cause = cause.getCause()) {
      if (cause instanceof org.apache.arrow.memory.OutOfMemoryException) {
        return Status.of(StatusCode.RESOURCE_EXHAUSTED,
            "the server's memory budget is used up (" + cause.getMessage() + "); try smaller batches or later");
      }
    }
    return null;
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
