package io.thallus.internal.server;

import io.thallus.Status;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.internal.protocol.Message;
import io.thallus.spi.BatchContents;
import io.thallus.engine.CancelSignal;
import io.thallus.spi.Deadline;
import io.thallus.engine.QueryResult;
import io.thallus.engine.QuerySpec;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One result stream on the server: execute the query, send OPENED, then a batch for every credit the client grants,
 * then END — or ERROR with the reason, whatever stops it.
 *
 * <p>The stream runs in steps on the connection's {@link EngineLane}, not on a thread of its own: a step goes as far
 * as it can and returns its thread when it has to wait for the client (no credit, or a control connection whose
 * outbound buffer is full). A grant, a release, writability or an abort schedules the next step. So a stream that
 * has not been asked for a batch holds no thread and no batch memory, only its open engine result.
 *
 * <p>Once the client has asked for a batch, the stream fetches one batch ahead while the client's budget has room,
 * so END goes out without waiting for a credit the client has no reason to send. After a full batch (more are
 * likely to follow) that look-ahead is made on a producer thread, where the server's {@link ProducerPool} lends one,
 * while this thread sends the batch: the engine's production and the transport's work overlap.
 */
final class ServerStream {
  private static final Logger LOG = LoggerFactory.getLogger(ServerStream.class);
  /** Which connections held the memory a stream waited for in vain: at most a line a second. */
  private static final io.thallus.internal.RateLimitedLog NO_ROOM = new io.thallus.internal.RateLimitedLog(LOG,
      java.time.Duration.ofSeconds(1));
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  /** What a parked stream waits for; each has its own deadline. */
  private enum Wait { NOTHING, CREDIT, WRITABLE }

  private final ServerConnection connection;
  private final ServerContext context;
  /** Told once the stream has finished and released what it held. */
  private final java.util.function.Consumer<ServerStream> done;
  private final int id;
  private final QuerySpec spec;
  /** The client asked what the statement is (its description), not for its result. */
  private final boolean describe;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private final CancelSignal cancelSignal = new CancelSignal();
  /** This stream's step, one object, so that a queued one can be withdrawn from its lane. */
  private final Runnable stepTask = this::step;
  private final long startNanos = System.nanoTime();

  // Guarded by lock.
  private int credits;
  private Status abortStatus;
  private boolean answerAbort;
  /** A step is queued or running: nobody else may submit one. */
  private boolean scheduled;
  /** Something changed while a step ran: the step looks again before it parks. */
  private boolean rerun;
  private boolean finished;
  private Wait waitingFor = Wait.NOTHING;
  private long parkedAt;

  // Touched only by the step that runs (steps never overlap).
  private volatile QueryResult result;
  private BatchContents ahead;
  private boolean exhausted;
  private boolean asked;
  private long nextBatchBytes;
  private long rows;
  private long batches;
  private long bytes;
  private long cpuNanos;
  private long stepCpuStart;
  /** END has been sent: the stream has succeeded. Written by the step that sends it, read in finish (same thread). */
  private boolean ended;
  private volatile ScheduledFuture<?> timeout;
  /** The look-ahead batch when a producer thread makes it. */
  private final NextBatch nextBatch = new NextBatch();

  /** Where a stream's engine result comes from: the query run for it alone, or its part of a split. */
  interface ResultSource {
    QueryResult open(CancelSignal cancel);
  }

  /** Where the result comes from; null: the stream runs its spec itself. */
  private final ResultSource source;

  ServerStream(ServerConnection connection, int id, QuerySpec spec, boolean describe, int initialCredits,
      java.util.function.Consumer<ServerStream> done) {
    this(connection, id, spec, describe, initialCredits, done, null);
  }

  ServerStream(ServerConnection connection, int id, QuerySpec spec, boolean describe, int initialCredits,
      java.util.function.Consumer<ServerStream> done, ResultSource source) {
    this.source = source;
    this.connection = connection;
    this.context = connection.context();
    this.done = done;
    this.id = id;
    this.spec = spec;
    this.describe = describe;
    this.credits = initialCredits;
  }

  int id() {
    return id;
  }

  /** Whether the stream has finished with its END sent (read once it has reported its end). */
  boolean endedWhole() {
    return ended;
  }

  /** Credits granted and not yet used. */
  int credits() {
    lock.lock();
    try {
      return credits;
    } finally {
      lock.unlock();
    }
  }

  /** Runs the first step: the query. */
  void start() {
    wake();
  }

  void grant(int more) {
    lock.lock();
    try {
      credits = (int) Math.min(Integer.MAX_VALUE, (long) credits + Math.max(0, more));
    } finally {
      lock.unlock();
    }
    wake();
  }

  /** Stops the stream; the first reason wins. {@code answer}: whether the client is told (it is gone, or closed). */
  void abort(Status status, boolean answer) {
    boolean stepRunning;
    lock.lock();
    try {
      if (abortStatus == null) {
        abortStatus = status;
        answerAbort = answer;
      }
      stepRunning = scheduled && !finished;
      changed.signalAll();
    } finally {
      lock.unlock();
    }
    cancelSignal.cancel();
    QueryResult running = result;
    // A parked stream stops at its next step (woken below) and closes its result there; only a step that may be
    // inside the engine needs the engine to stop.
    if (running != null && stepRunning) {
      // Off the caller's thread (often an event loop): stopping an engine's work may wait on the engine's locks.
      Thread.ofPlatform().daemon().name("thallus-server-cancel").start(running::cancel);
    }
    if (stepRunning && connection.lane().withdraw(stepTask)) {
      // The step was still queued behind its credential's other statements: it runs now, off the caller's thread
      // (closing an open result may wait on the engine), finds the abort and answers it, instead of at its turn.
      Thread.ofPlatform().daemon().name("thallus-server-cancel").start(stepTask);
      return;
    }
    wake();
  }

  /** Something the stream may be waiting for has changed: run a step, or have the running one look again. */
  void wake() {
    lock.lock();
    try {
      if (finished) {
        return;
      }
      if (scheduled) {
        rerun = true;
        changed.signalAll();
        return;
      }
      scheduled = true;
      waitingFor = Wait.NOTHING;
    } finally {
      lock.unlock();
    }
    connection.lane().submit(stepTask);
  }

  /** Fails the stream if it has waited for its client longer than that wait allows. */
  void expireIfIdle(long nowNanos) {
    Status expired = null;
    lock.lock();
    try {
      long waited = nowNanos - parkedAt;
      if (waitingFor == Wait.CREDIT && waited > context.idleTimeout().toNanos()) {
        expired = Status.of(StatusCode.DEADLINE_EXCEEDED, "stream " + id + " was idle for "
            + context.idleTimeout().toSeconds() + " s: the client asked for no batch");
      } else if (waitingFor == Wait.WRITABLE && waited > context.ioTimeout().toNanos()) {
        expired = Status.of(StatusCode.DEADLINE_EXCEEDED, "stream " + id + " stopped: the client read nothing "
            + "from its connection for " + context.ioTimeout().toSeconds() + " s");
      }
    } finally {
      lock.unlock();
    }
    if (expired != null) {
      abort(expired, true);
    }
  }

  private void step() {
    stepCpuStart = THREADS.getCurrentThreadCpuTime();
    Status failure = null;
    boolean over;
    try {
      over = advance();
    } catch (ThallusException e) {
      failure = e.status();
      over = true;
    } catch (RuntimeException | Error e) {
      failure = budgetExhausted(e);
      if (failure == null) {
        LOG.error("stream {} failed", id, e);
        failure = Status.of(StatusCode.INTERNAL, "server error: " + e).withCause(e);
      }
      over = true;
    } finally {
      cpuNanos += THREADS.getCurrentThreadCpuTime() - stepCpuStart;
    }
    if (over) {
      finish(failure);
    }
  }

  /** Goes as far as the stream can. True when it is over (END sent, or a failure thrown). */
  private boolean advance() {
    throwIfAborted();
    if (result == null) {
      result = source != null ? source.open(cancelSignal) : describe
          ? WireAnswers.of(connection.engineSession().describeStatement(spec, connection.allocator(), cancelSignal),
              connection.allocator())
          : WireAnswers.of(connection.engineSession().execute(spec, connection.allocator(), cancelSignal),
              connection.allocator());
      throwIfAborted();
      // Leaves with the first full batch, with END, or when the step parks or yields: one write for a small result.
      connection.outbox().hold(new Message.Opened(id, result.schema().serializeAsMessage()));
      if (spec.schemaOnly()) {
        sendEnd();
        return true;
      }
      nextBatchBytes = fixedWidthBytes(result.schema(), spec.batchRows());
    }
    while (true) {
      throwIfAborted();
      if (ahead == null && !exhausted) {
        if (nextBatch.isMaking()) {
          // The look-ahead, started within the budget's room: taken whether or not the client has asked.
        } else if (hasCredit()) {
          asked = true;
          awaitHeadroom(nextBatchBytes);
        } else if (!asked || context.budgets().headroom(connection.allocator()) < nextBatchBytes) {
          // Not asked yet, or no room to look ahead: hold nothing until the client asks.
          if (park(Wait.CREDIT)) {
            continue;
          }
          return false;
        }
        ahead = nextBatch.isMaking() ? nextBatch.take(this::throwIfAborted) : result.next();
        if (ahead == null) {
          exhausted = true;
        } else {
          nextBatchBytes = Math.max(nextBatchBytes, ahead.bufferBytes());
        }
      }
      if (exhausted) {
        sendEnd();
        return true;
      }
      if (!hasCredit()) {
        if (park(Wait.CREDIT)) {
          continue;
        }
        // A batch is ready and the client has not asked for it yet.
        context.metrics().creditStall();
        return false;
      }
      if (!connection.outbox().isWritable()) {
        // The client is not reading its control connection: produce nothing more until it does.
        if (park(Wait.WRITABLE)) {
          continue;
        }
        return false;
      }
      takeCredit();
      BatchContents batch = ahead;
      ahead = null;
      int batchRows = batch.rowCount();
      if (batchRows >= spec.batchRows() && context.producers().lends()
          && context.budgets().headroom(connection.allocator()) >= nextBatchBytes
          && nextBatch.start(context.producers(), result)) {
        context.metrics().batchMadeAhead();
      }
      rows += batchRows;
      long batchBytes = batch.bufferBytes();
      bytes += batchBytes;
      connection.sender().send(id, batches++, batch, Deadline.after(context.ioTimeout()));
      context.metrics().batchSent(connection.transportName(), batchBytes);
      connection.outbox().afterBatch(batchRows, spec.batchRows());
      if (connection.lane().hasWaiting() || enginePoolIsFull()) {
        // Another stream waits for a thread: take turns, one batch each.
        yieldTurn();
        return false;
      }
    }
  }

  private boolean enginePoolIsFull() {
    return context.engineThreads() instanceof java.util.concurrent.ThreadPoolExecutor pool
        && !pool.getQueue().isEmpty();
  }

  private void sendEnd() {
    ended = true;
    connection.outbox().send(new Message.End(id, rows, batches, bytes, System.nanoTime() - startNanos,
        cpuNanos + nextBatch.producerCpuNanos() + THREADS.getCurrentThreadCpuTime() - stepCpuStart));
  }

  private boolean hasCredit() {
    lock.lock();
    try {
      return credits > 0;
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

  /**
   * Gives the thread back until {@link #wake} — unless something changed since the step last looked, in which case
   * it returns true and the step goes on.
   */
  private boolean park(Wait reason) {
    lock.lock();
    try {
      if (rerun || abortStatus != null) {
        rerun = false;
        return true;
      }
      scheduled = false;
      waitingFor = reason;
      parkedAt = System.nanoTime();
    } finally {
      lock.unlock();
    }
    connection.outbox().beforeWaiting();
    return false;
  }

  /** Queues the next step behind the lane's waiting ones; this step ends. */
  private void yieldTurn() {
    lock.lock();
    try {
      rerun = false;
    } finally {
      lock.unlock();
    }
    connection.outbox().beforeWaiting();
    connection.lane().submit(stepTask);
  }

  /**
   * Waits until the memory budgets (this client's, its credential's share, and the server's over all clients) have
   * room for the next batch: a batch is only asked for when it fits (one that then does not, the estimate being low,
   * fails with RESOURCE_EXHAUSTED and is freed whole). One that could never fit fails at once; otherwise the wait ends
   * at the I/O deadline.
   */
  private void awaitHeadroom(long needed) {
    BufferAllocator memory = connection.allocator();
    CredentialBudgets budgets = context.budgets();
    if (budgets.headroom(memory) >= needed) {
      return;
    }
    long capacity = budgets.capacity(memory);
    if (needed > capacity) {
      throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, budgets.capacityName(memory) + " is too small: a batch "
          + "of " + spec.batchRows() + " rows needs about " + needed + " bytes and the budget is " + capacity
          + "; ask for smaller batches");
    }
    // The client can release nothing it has not been sent.
    connection.outbox().beforeWaiting();
    Deadline deadline = Deadline.after(context.ioTimeout());
    while (budgets.headroom(memory) < needed) {
      // The connection's own transport may keep emptied buffers for reuse (shm's segments, let go only after 2 s
      // idle): in a budget they fill, the next batch would wait for that sweep after every few batches.
      if (connection.releaseUnusedTransportMemory() > 0) {
        continue;
      }
      throwIfAborted();
      if (deadline.isExpired()) {
        NO_ROOM.warn("no room", "stream {} waited {} s for memory in vain: {}", id, context.ioTimeout().toSeconds(),
            budgets.holders(memory));
        throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, budgets.budgetName(memory) + " is used up: the "
            + "next batch needs about " + needed + " bytes, " + budgets.headroom(memory) + " are free after waiting "
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

  /** The bytes a batch's fixed-width buffers take (variable-width data comes on top): a floor for the estimate. */
  private static long fixedWidthBytes(Schema schema, int rows) {
    long total = 0;
    for (Field field : schema.getFields()) {
      total += fixedWidthBytes(field, rows);
    }
    return total;
  }

  private static long fixedWidthBytes(Field field, int rows) {
    long validity = (rows + 7L) / 8;
    long values = switch (field.getType()) {
      case ArrowType.Int t -> (long) rows * t.getBitWidth() / 8;
      case ArrowType.FloatingPoint t -> rows * 8L;
      case ArrowType.Decimal t -> rows * (long) t.getBitWidth() / 8;
      case ArrowType.Date t -> rows * 8L;
      case ArrowType.Time t -> rows * 8L;
      case ArrowType.Timestamp t -> rows * 8L;
      case ArrowType.Utf8 t -> rows * 4L;
      case ArrowType.Binary t -> rows * 4L;
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

  private void finish(Status failure) {
    boolean answer = true;
    lock.lock();
    try {
      finished = true;
      scheduled = false;
      waitingFor = Wait.NOTHING;
      if (abortStatus != null && !ended) {
        // A cancelled query fails inside the engine with the engine's words; the reason is the abort's. A stream
        // whose END is out has succeeded, whatever came after it (the client's CLOSE once it has read the END).
        failure = abortStatus;
        answer = answerAbort;
      }
    } finally {
      lock.unlock();
    }
    if (failure != null && answer) {
      connection.outbox().send(new Message.Error(id, failure.code(), failure.description()));
    } else {
      // A short batch held for END goes out (or, to a client that has gone, is dropped) now, not at some other
      // stream's flush.
      connection.outbox().beforeWaiting();
    }
    context.metrics().queryEnded(failure, System.nanoTime() - startNanos);
    ScheduledFuture<?> pendingTimeout = timeout;
    if (pendingTimeout != null) {
      pendingTimeout.cancel(false);
    }
    if (ahead != null) {
      ahead.close();
      ahead = null;
    }
    try {
      QueryResult running = result;
      if (running != null) {
        // A batch still being made stops first: the result closes once nothing runs in it, which may be after this
        // stream is done if the producer does not return in time. The connection's engine session and memory, which
        // that producer still uses, stay open until then (a hold, released once the result has closed).
        connection.hold();
        Runnable closeResult = () -> {
          try {
            running.close();
          } finally {
            connection.releaseHold();
          }
        };
        // Closed here unless the late producer took it over: also when stopping failed (cancel or free threw).
        boolean closeNow = true;
        try {
          closeNow = nextBatch.stop(running, context.ioTimeout(), id, closeResult);
        } finally {
          if (closeNow) {
            closeResult.run();
          }
        }
      }
    } finally {
      done.accept(this);
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
