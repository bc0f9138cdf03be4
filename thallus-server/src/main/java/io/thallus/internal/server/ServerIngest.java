package io.thallus.internal.server;

import io.netty.buffer.ByteBuf;
import io.thallus.Status;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.internal.batch.BatchLayouts;
import io.thallus.internal.batch.BatchValidator;
import io.thallus.internal.batch.FetchedBatches;
import io.thallus.internal.batch.IpcFrames;
import io.thallus.internal.protocol.Message;
import io.thallus.spi.BatchContents;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.BodyFetcher;
import io.thallus.engine.CancelSignal;
import io.thallus.spi.Deadline;
import io.thallus.spi.FetchedBody;
import io.thallus.spi.IngestFetcher;
import io.thallus.engine.IngestSpec;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayDeque;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Schema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One ingest on the server: the engine pulls the client's batches (through an {@link ArrowReader} DuckDB scans by
 * the C stream interface) on an engine thread, while the event loop queues what arrives. Credits bound the queue:
 * the server grants the client's wish (within its limits) when the engine asks for the first batch, and one more
 * each time the engine takes a batch; a body the client holds (shm, cma) is reported released once the engine has
 * let go of its bytes. Whatever stops it (an error, CANCEL, the client gone, the timeout) fails the reader, so the
 * engine rolls the whole ingest back, and the answer is END with the rows written or ERROR.
 *
 * <p>The batches that arrived count in the connection's memory, inside its credential's. Like a result stream, an
 * ingest asks for more only as far as its credential's share ({@code maxMemoryPerCredential}) has room: the first
 * grant is one batch, and from then on each credit (the client's wish, within the server's limits) is granted only
 * while the share has room for a batch as large as the largest so far; the others are owed until it has, and when
 * nothing of this ingest is queued or on its way one is granted regardless, so it always moves.
 */
final class ServerIngest {
  private static final Logger LOG = LoggerFactory.getLogger(ServerIngest.class);
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  /**
   * What arrived for the engine, in order: a batch (ready once its body is in), a failed fetch, or the client's END.
   * Guarded by the ingest's lock.
   */
  private static final class Arrival {
    BatchContents contents;
    ThallusException failure;
    Message.End end;
    boolean ready;
  }

  private final ServerConnectionHandler connection;
  private final ServerContext context;
  private final int id;
  private final IngestSpec spec;
  private final int credits;
  private final IngestFetcherSource fetchers;
  private final CancelSignal cancel = new CancelSignal();
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition arrived = lock.newCondition();
  // Guarded by lock.
  private final ArrayDeque<Arrival> queue = new ArrayDeque<>();
  /** Batches the client may still send: granted and not yet received. */
  private int outstanding;
  private boolean endReceived;
  private Status abortStatus;
  private boolean answerAbort;
  private boolean finished;
  private volatile ScheduledFuture<?> timeout;

  /** The connection's one fetcher for the write direction, made at the first body that needs it. */
  interface IngestFetcherSource {
    IngestFetcher get();
  }

  /**
   * Fetches a body nobody will take (its ingest is over), only so the connection's transport stays in step with its
   * frames: what comes is freed at once.
   */
  static void drop(IngestFetcher fetcher, BatchHeader header) {
    fetcher.fetch(header, new BodyFetcher.Fetched() {
      @Override
      public void body(FetchedBody body) {
        body.release();
      }

      @Override
      public void failed(ThallusException error) {}
    });
  }

  ServerIngest(ServerConnectionHandler connection, ServerContext context, int id, IngestSpec spec, int credits,
      IngestFetcherSource fetchers) {
    this.connection = connection;
    this.context = context;
    this.id = id;
    this.spec = spec;
    this.credits = credits;
    this.fetchers = fetchers;
  }

  int id() {
    return id;
  }

  /** Batches the client may send now without waiting: what this ingest holds in credits. */
  int credits() {
    lock.lock();
    try {
      return outstanding;
    } finally {
      lock.unlock();
    }
  }

  void start(long timeoutMillis) {
    if (timeoutMillis > 0) {
      timeout = context.timers().schedule(() -> abort(Status.of(StatusCode.DEADLINE_EXCEEDED,
          "ingest ran past its timeout of " + timeoutMillis + " ms; nothing was written"), true),
          timeoutMillis, TimeUnit.MILLISECONDS);
    }
    connection.lane().submit(this::run);
  }

  /**
   * A BATCH frame for this ingest (event loop). A body inside the frame becomes a batch here, in memory of the
   * client's budget; the transport fetches one outside it now, as it arrives, and the engine takes it in order.
   * {@code inline} is valid only during the call.
   */
  void onBatch(BatchHeader header, ByteBuf inline, boolean serialized) {
    boolean outOfLine = !serialized && !inline.isReadable() && header.bufferBytes() > 0;
    boolean over;
    lock.lock();
    try {
      over = finished || abortStatus != null;
      if (!over) {
        if (endReceived || outstanding <= 0) {
          throw ThallusException.of(StatusCode.PROTOCOL_ERROR, "ingest " + id + " received batch "
              + header.batchId() + (endReceived ? " after its END" : " beyond the credits the server granted"));
        }
        outstanding--;
      }
    } finally {
      lock.unlock();
    }
    if (over) {
      if (outOfLine) {
        drop(fetchers.get(), header);
      }
      return;
    }
    Arrival arrival = new Arrival();
    if (serialized) {
      arrival.contents = IpcFrames.read(header, inline, connection.allocator());
      arrival.ready = true;
    } else if (!outOfLine) {
      arrival.contents = BatchLayouts.fromInline(header, inline, connection.allocator());
      arrival.ready = true;
    }
    if (!offer(arrival)) {
      if (outOfLine) {
        drop(fetchers.get(), header);
      }
      return;
    }
    if (outOfLine) {
      // Fetched as it arrives, ahead of the engine (credits bound how far): the engine finds it ready.
      IngestFetcher fetcher = fetchers.get();
      fetcher.fetch(header, new BodyFetcher.Fetched() {
        @Override
        public void body(FetchedBody body) {
          BatchContents contents;
          try {
            contents = FetchedBatches.rebuild(header, body, connection.allocator(), fetcher.clientHoldsBodies(),
                () -> connection.send(new Message.Next(id, 0, new long[] {header.batchId()})));
          } catch (ThallusException e) {
            failed(e);
            return;
          }
          complete(arrival, contents, null);
        }

        @Override
        public void failed(ThallusException error) {
          complete(arrival, null, error);
        }
      });
    }
  }

  private void complete(Arrival arrival, BatchContents contents, ThallusException failure) {
    lock.lock();
    try {
      if (!finished) {
        arrival.contents = contents;
        arrival.failure = failure;
        arrival.ready = true;
        arrived.signalAll();
        return;
      }
    } finally {
      lock.unlock();
    }
    if (contents != null) {
      contents.close();
    }
  }

  /** The client sent its last batch. */
  void onEnd(Message.End end) {
    lock.lock();
    try {
      endReceived = true;
    } finally {
      lock.unlock();
    }
    Arrival arrival = new Arrival();
    arrival.end = end;
    arrival.ready = true;
    offer(arrival);
  }

  /** Queues an arrival for the engine; false (and its batch closed) when the ingest takes no more. */
  private boolean offer(Arrival arrival) {
    lock.lock();
    try {
      if (!finished && abortStatus == null) {
        queue.add(arrival);
        arrived.signalAll();
        return true;
      }
    } finally {
      lock.unlock();
    }
    if (arrival.contents != null) {
      arrival.contents.close();
    }
    return false;
  }

  /** Stops the ingest; the first reason wins. {@code answer}: whether the client is told. */
  void abort(Status status, boolean answer) {
    lock.lock();
    try {
      if (finished) {
        return;
      }
      if (abortStatus == null) {
        abortStatus = status;
        answerAbort = answer;
      }
      arrived.signalAll();
    } finally {
      lock.unlock();
    }
    cancel.cancel();
  }

  private void run() {
    long start = System.nanoTime();
    long cpuStart = THREADS.getCurrentThreadCpuTime();
    Batches batches = new Batches();
    Status failure = null;
    long rows = 0;
    try {
      rows = connection.engineSession().ingest(spec, batches, connection.allocator(), cancel);
      if (!batches.ended) {
        throw ThallusException.of(StatusCode.INTERNAL, "the engine finished ingest " + id
            + " before the client's last batch");
      }
    } catch (ThallusException e) {
      // A failure in the reader reaches the engine as text only: its own status says it better.
      failure = batches.failure instanceof ThallusException cause ? cause.status() : e.status();
    } catch (RuntimeException | Error e) {
      LOG.error("ingest {} failed", id, e);
      failure = Status.of(StatusCode.INTERNAL, "server error: " + e).withCause(e);
    } finally {
      batches.closeQuietly();
    }
    finish(failure, batches, rows, System.nanoTime() - start, THREADS.getCurrentThreadCpuTime() - cpuStart);
  }

  private void finish(Status failure, Batches batches, long rows, long nanos, long cpuNanos) {
    Status abort;
    boolean answer;
    lock.lock();
    try {
      finished = true;
      abort = abortStatus;
      answer = answerAbort;
      for (Arrival left : queue) {
        // A fetch still under way closes its batch when it completes and finds the ingest finished.
        if (left.contents != null) {
          left.contents.close();
        }
      }
      queue.clear();
    } finally {
      lock.unlock();
    }
    ScheduledFuture<?> timer = timeout;
    if (timer != null) {
      timer.cancel(false);
    }
    if (abort != null) {
      // Why it stopped is the abort's reason; the engine's error is only its echo.
      if (answer) {
        connection.send(new Message.Error(id, abort.code(), abort.description()));
      }
    } else if (failure != null) {
      connection.send(new Message.Error(id, failure.code(), failure.description()));
    } else {
      context.metrics().batchesReceived(connection.transportName(), batches.batches, batches.bytes);
      connection.send(new Message.End(id, rows, batches.batches, batches.bytes, nanos, cpuNanos));
    }
    connection.ingestDone(this);
  }

  private ThallusException aborted() {
    return ThallusException.of(abortStatus.code(), abortStatus.description());
  }

  /**
   * The client's batches as an Arrow reader, for the engine: each load takes the next arrival (waiting for it up to
   * the I/O timeout), fetching its body first if it came outside its frame.
   */
  private final class Batches extends ArrowReader {
    private final BufferAllocator allocator = connection.allocator();
    private boolean granted;
    /** Credits the engine freed but the credential's share had no room for yet. */
    private int owed;
    /** The largest batch so far: the room the share needs before one more is asked for. */
    private long largestBatch;
    private boolean ended;
    /** Checks each batch before the loader or the engine reads it; made at the first batch. */
    private BatchValidator validator;
    /** Why the reader stopped, if it failed: the engine's error echoes it only as text. */
    volatile RuntimeException failure;
    long batches;
    long bytes;
    private long rows;

    Batches() {
      super(connection.allocator());
    }

    @Override
    public boolean loadNextBatch() throws java.io.IOException {
      RuntimeException earlier = failure;
      if (earlier != null) {
        // The engine may ask again after a failure: the answer stays the first failure.
        throw earlier;
      }
      try {
        return loadNext();
      } catch (RuntimeException e) {
        // The engine sees only the message (through the C stream interface); the trace stays here.
        LOG.debug("ingest {} stops reading batches", id, e);
        failure = e;
        throw e;
      }
    }

    private boolean loadNext() throws java.io.IOException {
      if (ended) {
        return false;
      }
      // The batch the engine took last has been passed on: the client may send one more, if its credential has room.
      if (granted) {
        owed++;
        int now = creditsWithinShare();
        if (now > 0) {
          owed -= now;
          grant(now);
        }
      } else {
        // The first batch tells how large they are: the rest of the client's credits follow within the share.
        owed = credits - 1;
        grant(1);
        granted = true;
      }
      Arrival arrival = next();
      if (arrival.end != null) {
        ended = true;
        if (arrival.end.rows() != rows || arrival.end.batches() != batches) {
          throw ThallusException.of(StatusCode.PROTOCOL_ERROR, "ingest " + id + ": the client says it sent "
              + arrival.end.batches() + " batches of " + arrival.end.rows() + " rows, the server received "
              + batches + " of " + rows);
        }
        return false;
      }
      if (arrival.failure != null) {
        throw arrival.failure;
      }
      try (BatchContents contents = arrival.contents) {
        if (validator == null) {
          validator = new BatchValidator(spec.schema());
        }
        // A batch that lies about its offsets, lengths or indices would make DuckDB read outside its buffers.
        validator.check(contents);
        long batchBytes = contents.bufferBytes();
        for (org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch dictionary : contents.dictionaries()) {
          // The validator has refused a dictionary the schema does not name. Loading takes the dictionary batch
          // over (and closes it).
          loadDictionary(dictionary);
        }
        new VectorLoader(getVectorSchemaRoot()).load(contents.records());
        batches++;
        rows += contents.rowCount();
        bytes += batchBytes;
        largestBatch = Math.max(largestBatch, batchBytes);
      }
      return true;
    }

    /**
     * How many of the owed credits to grant now: as many batches as large as the largest so far as the credential's
     * share (and the client's budget) has room for, else one when nothing of this ingest is queued or on its way (it
     * would stall otherwise).
     */
    private int creditsWithinShare() {
      long room = context.budgets().headroom(allocator) / Math.max(1, largestBatch);
      if (room > 0) {
        return (int) Math.min(owed, room);
      }
      lock.lock();
      try {
        return queue.isEmpty() && outstanding == 0 ? 1 : 0;
      } finally {
        lock.unlock();
      }
    }

    private void grant(int more) {
      lock.lock();
      try {
        if (abortStatus != null) {
          throw aborted();
        }
        outstanding += more;
      } finally {
        lock.unlock();
      }
      connection.send(new Message.Next(id, more, new long[0]));
    }

    private Arrival next() {
      Deadline deadline = Deadline.after(context.ioTimeout());
      lock.lock();
      try {
        while (queue.isEmpty() || !queue.peek().ready) {
          if (abortStatus != null) {
            throw aborted();
          }
          long left = deadline.remainingNanos();
          if (left == 0) {
            throw deadline.expired("the client's next batch for ingest " + id);
          }
          arrived.awaitNanos(left);
        }
        if (abortStatus != null) {
          throw aborted();
        }
        return queue.poll();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw ThallusException.of(StatusCode.CANCELLED, "interrupted waiting for the client's next batch");
      } finally {
        lock.unlock();
      }
    }

    @Override
    public long bytesRead() {
      return bytes;
    }

    @Override
    protected void closeReadSource() {}

    @Override
    protected Schema readSchema() {
      return spec.schema();
    }

    void closeQuietly() {
      try {
        close();
      } catch (java.io.IOException | RuntimeException e) {
        LOG.debug("closing ingest {}'s reader: {}", id, e.toString());
      }
    }
  }
}
