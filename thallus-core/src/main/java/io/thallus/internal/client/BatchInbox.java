package io.thallus.internal.client;

import io.netty.buffer.ByteBuf;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.internal.batch.BatchLayouts;
import io.thallus.internal.batch.FetchedBatches;
import io.thallus.internal.batch.IpcFrames;
import io.thallus.spi.BatchContents;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.ClientSession;
import io.thallus.spi.FetchedBody;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.arrow.memory.BufferAllocator;

/**
 * How every batch of one connection arrives, whatever the transport: bodies inside their BATCH frame are rebuilt
 * here (or deserialized, for ipc), others are fetched by the transport; each stream's batches, END and error reach it
 * in the order the server sent them, however the fetches finish; and a batch the server holds is reported released
 * once the consumer has let go of its bytes (or, for a copy, as soon as the copy is in).
 */
final class BatchInbox implements AutoCloseable {
  /** Where batches go, in order. Called on the control thread or a transport's thread, one stream at a time. */
  interface Receiver {
    void batch(int streamId, BatchContents contents);

    /** The connection cannot go on. */
    void fail(ThallusException error);

    /** The stream has releases waiting in {@link #takeReleases}; a stream that grants no more sends them alone. */
    void releasesWaiting(int streamId);

    /** Whether the consumer still has the stream open: a closed stream's line goes once it is empty. */
    boolean isOpen(int streamId);
  }

  /** One thing a stream is owed, in arrival order: a batch (ready once its body is in), or its END or error. */
  private static final class Slot {
    BatchContents contents;
    Runnable action;
    boolean ready;
  }

  /** One stream's line of slots; whoever completes the head delivers what is ready, under the line's lock. */
  private final class Line {
    final int streamId;
    final ArrayDeque<Slot> slots = new ArrayDeque<>();
    boolean over;

    Line(int streamId) {
      this.streamId = streamId;
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
        if (closed) {
          if (head.contents != null) {
            head.contents.close();
          }
        } else if (head.action != null) {
          head.action.run();
          // END and errors are a stream's last word.
          over = true;
        } else if (head.contents != null) {
          receiver.batch(streamId, head.contents);
        }
      }
      if (slots.isEmpty() && (over || !receiver.isOpen(streamId))) {
        lines.remove(streamId, this);
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

  private final ClientSession session;
  private final boolean serializes;
  private final BufferAllocator allocator;
  private final Receiver receiver;
  private final Map<Integer, Line> lines = new ConcurrentHashMap<>();
  private final ReleasedBatches released = new ReleasedBatches();
  private volatile boolean closed;

  BatchInbox(ClientSession session, boolean serializes, BufferAllocator allocator, Receiver receiver) {
    this.session = session;
    this.serializes = serializes;
    this.allocator = allocator;
    this.receiver = receiver;
  }

  private Line line(int streamId) {
    return lines.computeIfAbsent(streamId, Line::new);
  }

  /** A BATCH frame arrived (control thread, arrival order). {@code inline} is valid only during the call. */
  void onBatch(BatchHeader header, ByteBuf inline) {
    Line line = line(header.streamId());
    Slot slot = line.add();
    try {
      if (serializes) {
        line.complete(slot, IpcFrames.read(header, inline, allocator));
      } else if (inline.isReadable() || header.bufferBytes() == 0) {
        line.complete(slot, BatchLayouts.fromInline(header, inline, allocator));
      } else {
        session.fetch(header, new ClientSession.Fetched() {
          @Override
          public void body(FetchedBody body) {
            BatchContents contents;
            try {
              contents = rebuild(header, body);
            } catch (ThallusException e) {
              failed(e);
              return;
            }
            line.complete(slot, contents);
          }

          @Override
          public void failed(ThallusException error) {
            line.complete(slot, null);
            receiver.fail(error);
          }
        });
      }
    } catch (ThallusException e) {
      line.complete(slot, null);
      receiver.fail(e);
    } catch (RuntimeException e) {
      line.complete(slot, null);
      receiver.fail(ThallusException.of(StatusCode.PROTOCOL_ERROR, "bad batch " + header.batchId() + " of stream "
          + header.streamId() + ": " + e.getMessage(), e));
    }
  }

  /** The consumer closed the stream: its line goes as soon as nothing in it waits for a fetch. */
  void forget(int streamId) {
    Line line = lines.get(streamId);
    if (line != null) {
      line.then(() -> {});
    }
  }

  /** Runs a stream's END or error once every batch the server sent before it has been delivered. */
  void afterBatches(int streamId, Runnable action) {
    line(streamId).then(action);
  }

  /** The batches the consumer released since the last call, for the server (piggybacked on NEXT). */
  long[] takeReleases(int streamId) {
    return released.take(streamId);
  }

  /** The batch on a fetched body, without copying (see {@link FetchedBatches#rebuild}). */
  private BatchContents rebuild(BatchHeader header, FetchedBody body) {
    return FetchedBatches.rebuild(header, body, allocator, session.serverHoldsBodies(), () -> reportReleased(header));
  }

  private void reportReleased(BatchHeader header) {
    if (closed) {
      return;
    }
    released.add(header.streamId(), header.batchId());
    receiver.releasesWaiting(header.streamId());
  }

  /** Drops whatever no stream will take now; later arrivals are closed as they come. */
  @Override
  public void close() {
    closed = true;
    for (Line line : lines.values()) {
      line.drop();
    }
    lines.clear();
  }
}
