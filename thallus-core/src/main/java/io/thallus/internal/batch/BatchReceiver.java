package io.thallus.internal.batch;

import io.netty.buffer.ByteBuf;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.spi.BatchContents;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.BodyFetcher;
import io.thallus.spi.FetchedBody;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.OutOfMemoryException;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * How every batch arrives at its receiver, whatever the transport and whichever way (server to client on the read
 * path, client to server on ingest); the mirror of {@link BatchSender}. A BATCH frame's body is deserialized (ipc),
 * rebuilt from the frame (small), or fetched by the transport; each stream's batches reach the {@link Consumer} in
 * the order their frames came, however the fetches finish, each decompressed within the receiver's bound when its
 * body is compressed ({@link BatchDecompressor}) and checked by the stream's {@link BatchValidator} first; what
 * follows a stream's batches (its END, its error) waits for them; and a body the peer holds is reported released once
 * the consumer has let go of its bytes (or, for a copy, as soon as the copy is in).
 */
public final class BatchReceiver implements AutoCloseable {
  /**
   * Where batches go, in order. Called on the control connection's thread or a transport's, one stream at a time.
   */
  public interface Consumer {
    /** The stream's next batch, checked; the consumer owns it. */
    void batch(int streamId, BatchContents contents);

    /**
     * A batch of the stream that cannot be read safely (its offsets, lengths or indices lie, or it came before the
     * stream's schema): it has been freed, and the stream takes no more batches.
     */
    void refused(int streamId, ThallusException error);

    /** A batch of the stream could not be received (a fetch failed, its bytes are malformed, no memory). */
    void failed(int streamId, ThallusException error);

    /** The peer holds the body of the stream's batch {@code batchId} and may reuse it now: tell it. */
    void released(int streamId, long batchId);

    /** Whether the stream is still open at the consumer: a closed stream's line goes once it is empty. */
    boolean isOpen(int streamId);
  }

  /** Where out-of-line bodies come from: the transport's side for this direction, made at the first such body. */
  public interface Fetchers {
    BodyFetcher fetcher();

    /** Whether the peer keeps each body until released (shm, cma, rdma), so releases are reported. */
    boolean peerHoldsBodies();

    /** A fetcher there from the start (the client's session). */
    static Fetchers of(BodyFetcher fetcher, boolean peerHoldsBodies) {
      return new Fetchers() {
        @Override
        public BodyFetcher fetcher() {
          return fetcher;
        }

        @Override
        public boolean peerHoldsBodies() {
          return peerHoldsBodies;
        }
      };
    }
  }

  /** One thing a stream is owed, in arrival order: a batch (ready once its body is in), or an action. */
  private static final class Slot {
    BatchContents contents;
    Runnable action;
    boolean ready;
  }

  /** One stream's line of slots; whoever completes the head delivers what is ready, under the line's lock. */
  private final class Line {
    final int streamId;
    final ArrayDeque<Slot> slots = new ArrayDeque<>();
    Schema schema;
    /** Checks the stream's batches in order (it keeps the dictionaries seen); made at the first batch. */
    BatchValidator validator;
    boolean over;
    boolean refused;

    Line(int streamId) {
      this.streamId = streamId;
    }

    /** A stream starts on this id: its batches are checked against {@code expected} from the first. */
    synchronized void expect(Schema expected) {
      schema = expected;
      // An id used before (a peer may reuse one whose stream is over) keeps nothing of that stream's checks.
      validator = null;
      refused = false;
      over = false;
    }

    synchronized Slot add() {
      Slot slot = new Slot();
      slots.add(slot);
      return slot;
    }

    synchronized void complete(Slot slot, BatchContents contents) {
      slot.contents = contents;
      slot.ready = true;
      drain();
    }

    synchronized void then(Runnable action) {
      Slot slot = new Slot();
      slot.action = action;
      slot.ready = true;
      slots.add(slot);
      drain();
    }

    private void drain() {
      while (!slots.isEmpty() && slots.peek().ready) {
        Slot head = slots.poll();
        if (head.contents != null && (closed || refused)) {
          // Nobody takes it: the receiver has closed, or the stream has refused a batch before it.
          head.contents.close();
        } else if (head.contents != null) {
          deliver(head.contents);
        } else if (head.action != null && !closed) {
          head.action.run();
          // END and errors are a stream's last word.
          over = true;
        }
      }
      if (slots.isEmpty() && (over || !consumer.isOpen(streamId))) {
        lines.remove(streamId, this);
      }
    }

    private void deliver(BatchContents received) {
      BatchContents contents;
      try {
        contents = BatchDecompressor.decompress(received, allocator, maxBatchBytes.getAsLong(), budgetName.get(),
            "batch of stream " + streamId);
      } catch (ThallusException e) {
        // Freed already; a stream whose batch cannot be decompressed safely takes no more, as for a refused check.
        refused = true;
        consumer.refused(streamId, e);
        return;
      }
      ThallusException refusal = check(contents);
      if (refusal == null) {
        consumer.batch(streamId, contents);
        return;
      }
      contents.close();
      refused = true;
      consumer.refused(streamId, refusal);
    }

    /** Why the batch cannot be read safely, or null. */
    private ThallusException check(BatchContents contents) {
      if (schema == null) {
        return ThallusException.of(StatusCode.PROTOCOL_ERROR, "stream " + streamId + " sent a batch before its "
            + "schema");
      }
      try {
        if (validator == null) {
          validator = new BatchValidator(schema);
        }
        validator.check(contents);
        return null;
      } catch (ThallusException e) {
        return e;
      }
    }

    synchronized void drop() {
      for (Slot slot : slots) {
        if (slot.contents != null) {
          slot.contents.close();
        }
      }
      slots.clear();
    }
  }

  private final Fetchers fetchers;
  private final boolean serializes;
  private final BufferAllocator allocator;
  private final Supplier<String> budgetName;
  private final LongSupplier maxBatchBytes;
  private final Consumer consumer;
  private final Map<Integer, Line> lines = new ConcurrentHashMap<>();
  private volatile boolean closed;

  /**
   * {@code serializes}: every body comes serialized inside its frame (ipc). Batches are made in {@code allocator};
   * {@code budgetName} names its budget, for the error when it is used up. {@code maxBatchBytes} bounds what one
   * compressed batch may decompress to, besides the allocator's headroom.
   */
  public BatchReceiver(Fetchers fetchers, boolean serializes, BufferAllocator allocator,
      Supplier<String> budgetName, LongSupplier maxBatchBytes, Consumer consumer) {
    this.fetchers = fetchers;
    this.serializes = serializes;
    this.allocator = allocator;
    this.budgetName = budgetName;
    this.maxBatchBytes = maxBatchBytes;
    this.consumer = consumer;
  }

  private Line line(int streamId) {
    return lines.computeIfAbsent(streamId, Line::new);
  }

  /** The schema the stream's batches must match; a batch that arrives before it is refused. */
  public void expect(int streamId, Schema schema) {
    line(streamId).expect(schema);
  }

  /**
   * A BATCH frame arrived (control connection's thread, arrival order). {@code inline} is valid only during the call.
   * Every body goes one of three ways: serialized in the frame (ipc), inside the frame (small), or fetched.
   */
  public void onBatch(BatchHeader header, ByteBuf inline) {
    Line line = line(header.streamId());
    Slot slot = line.add();
    try {
      if (serializes) {
        line.complete(slot, IpcFrames.read(header, inline, allocator));
      } else if (!isOutOfLine(header, inline)) {
        line.complete(slot, BatchLayouts.fromInline(header, inline, allocator));
      } else {
        fetch(header, line, slot);
      }
    } catch (ThallusException e) {
      line.complete(slot, null);
      consumer.failed(header.streamId(), e);
    } catch (OutOfMemoryException e) {
      line.complete(slot, null);
      consumer.failed(header.streamId(), ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, budgetName.get()
          + " has no room for batch " + header.batchId() + " of stream " + header.streamId(), e));
    } catch (RuntimeException e) {
      line.complete(slot, null);
      consumer.failed(header.streamId(), ThallusException.of(StatusCode.PROTOCOL_ERROR, "bad batch "
          + header.batchId() + " of stream " + header.streamId() + ": " + e.getMessage(), e));
    }
  }

  private boolean isOutOfLine(BatchHeader header, ByteBuf inline) {
    return !serializes && !inline.isReadable() && header.bufferBytes() > 0;
  }

  private void fetch(BatchHeader header, Line line, Slot slot) {
    BodyFetcher fetcher = fetchers.fetcher();
    // Asked now, not when the body comes: by then the connection may have closed, and the body must still be freed.
    boolean peerHolds = fetchers.peerHoldsBodies();
    fetcher.fetch(header, new BodyFetcher.Fetched() {
      @Override
      public void body(FetchedBody body) {
        BatchContents contents;
        try {
          contents = FetchedBatches.rebuild(header, body, allocator, peerHolds, () -> reportReleased(header));
        } catch (ThallusException e) {
          failed(e);
          return;
        }
        line.complete(slot, contents);
      }

      @Override
      public void failed(ThallusException error) {
        line.complete(slot, null);
        consumer.failed(header.streamId(), error);
      }
    });
  }

  /**
   * A BATCH frame for a stream that takes no more (its ingest is over): a body outside its frame is still fetched and
   * freed at once, so a transport whose bodies follow their frames stays in step with them.
   */
  public void discard(BatchHeader header, ByteBuf inline) {
    if (!isOutOfLine(header, inline)) {
      return;
    }
    fetchers.fetcher().fetch(header, new BodyFetcher.Fetched() {
      @Override
      public void body(FetchedBody body) {
        body.release();
      }

      @Override
      public void failed(ThallusException error) {}
    });
  }

  /** Runs {@code action} (a stream's END or error) once every batch that arrived before it has been delivered. */
  public void afterBatches(int streamId, Runnable action) {
    line(streamId).then(action);
  }

  /** The consumer closed the stream: its line goes as soon as nothing in it waits for a fetch. */
  public void forget(int streamId) {
    Line line = lines.get(streamId);
    if (line != null) {
      line.then(() -> {});
    }
  }

  private void reportReleased(BatchHeader header) {
    if (!closed) {
      consumer.released(header.streamId(), header.batchId());
    }
  }

  /** Drops whatever no stream will take now; later arrivals are closed as they come. Idempotent. */
  @Override
  public void close() {
    closed = true;
    for (Line line : lines.values()) {
      line.drop();
    }
    lines.clear();
  }
}
