package io.thallus.internal.server;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.internal.batch.BatchLayouts;
import io.thallus.internal.batch.IpcFrames;
import io.thallus.spi.BatchContents;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.Deadline;
import io.thallus.spi.PackedBody;
import io.thallus.spi.PlacedBody;
import io.thallus.spi.ServerSession;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.OutOfMemoryException;

/**
 * How every batch of one connection leaves the server, whatever the transport: packed once, carried inside its BATCH
 * frame when small (or always, serialized, for ipc), else placed by the transport and announced by a frame this class
 * writes. Placed bodies the client reads later are held in the connection's {@link HeldBatches}.
 */
final class BatchSender implements AutoCloseable {
  /** Queues one BATCH frame on the control connection; {@code inline} is released once written. */
  interface Frames {
    void write(BatchHeader header, ByteBuf inline);
  }

  private final ServerSession session;
  private final String transport;
  private final boolean serializes;
  private final ServerMetrics metrics;
  private final Frames frames;
  private final BufferAllocator allocator;
  private final Duration ioTimeout;
  private final HeldBatches held;
  /**
   * Placing a body, announcing it, and what follows the announcement happen for one batch at a time: a transport
   * whose bodies follow their frames on a stream of their own (tcp) needs them in frame order.
   */
  private final ReentrantLock placing = new ReentrantLock();

  BatchSender(ServerSession session, io.thallus.spi.Transport transport, Frames frames, BufferAllocator allocator,
      Duration ioTimeout, long memoryPerClient, ServerMetrics metrics) {
    this.session = session;
    this.transport = transport.name();
    this.serializes = transport.serializesBatches();
    this.metrics = metrics;
    this.frames = frames;
    this.allocator = allocator;
    this.ioTimeout = ioTimeout;
    this.held = new HeldBatches(session, memoryPerClient);
  }

  /** Sends one batch and closes {@code contents}. Runs on a stream's thread; may block until {@code deadline}. */
  void send(int streamId, long batchId, BatchContents contents, Deadline deadline) {
    long bytes = contents.bufferBytes();
    try (contents) {
      write(streamId, batchId, contents, deadline);
    }
    metrics.batchSent(transport, bytes);
  }

  private void write(int streamId, long batchId, BatchContents contents, Deadline deadline) {
    // Every body goes one of three ways: serialized (ipc), inside the frame (small), or placed by the transport.
    if (serializes) {
      ByteBuf frame = allocateInline(IpcFrames.frameBytes(contents));
      try {
        IpcFrames.write(batchId, contents, frame);
      } catch (RuntimeException e) {
        frame.release();
        throw e;
      }
      frames.write(new BatchHeader(streamId, batchId, List.of()), frame);
      return;
    }
    PackedBody body = BatchLayouts.pack(contents);
    if (body.length() <= BatchLayouts.INLINE_MAX) {
      ByteBuf inline = BatchLayouts.copyInline(body, allocateInline((int) body.length()));
      frames.write(new BatchHeader(streamId, batchId, body.parts()), inline);
      return;
    }
    placing.lock();
    try {
      PlacedBody placed = held.place(streamId, batchId, body, deadline);
      try {
        frames.write(new BatchHeader(streamId, batchId, placed.parts()), Unpooled.EMPTY_BUFFER);
        placed.afterAnnounced(deadline);
      } finally {
        if (!placed.heldUntilReleased()) {
          placed.close();
        }
      }
    } finally {
      placing.unlock();
    }
  }

  /** The client released a batch (piggybacked on NEXT). */
  void released(int streamId, long batchId) {
    held.release(streamId, batchId);
  }

  /**
   * Memory for the bytes a BATCH frame carries, counted against the client's budget until the frame is written.
   * Waits up to the I/O deadline for room, then fails with RESOURCE_EXHAUSTED naming the budget.
   */
  private ByteBuf allocateInline(int capacity) {
    Deadline deadline = Deadline.after(ioTimeout);
    while (true) {
      try {
        return AccountedByteBuf.allocate(allocator, capacity);
      } catch (OutOfMemoryException e) {
        if (deadline.isExpired()) {
          throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, ServerStream.budgetName(allocator)
              + " is used up: " + capacity + " bytes for a batch frame found no room in "
              + ioTimeout.toSeconds() + " s", e);
        }
        try {
          // Frames being written free memory without signalling: look again shortly.
          Thread.sleep(5);
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          throw ThallusException.of(StatusCode.CANCELLED, "interrupted waiting for memory for a batch frame");
        }
      }
    }
  }

  /** The connection is over: every held body is freed, then the session closes. Idempotent. */
  @Override
  public void close() {
    try {
      held.close();
    } finally {
      session.close();
    }
  }
}
