package io.thallus.internal.batch;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.thallus.BatchCompression;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.spi.BatchContents;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.BodyPlacer;
import io.thallus.spi.Deadline;
import io.thallus.spi.PackedBody;
import io.thallus.spi.PlacedBody;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.OutOfMemoryException;

/**
 * How every batch leaves its sender, whatever the transport and whichever way (server to client on the read path,
 * client to server on ingest): packed once, carried inside its BATCH frame when small (or always, serialized, for
 * ipc; or always, packed, when the transport has no placer for this direction), else placed by the transport and
 * announced by a frame this class writes. Placed bodies the peer reads later are held in {@link HeldBatches}.
 */
public final class BatchSender implements AutoCloseable {
  /** Queues one BATCH frame on the control connection; {@code inline} is released once written. */
  public interface Frames {
    void write(BatchHeader header, ByteBuf inline);
  }

  private final BodyPlacer placer;
  private final AutoCloseable placerOwner;
  private final boolean serializes;
  private final Frames frames;
  private final BufferAllocator allocator;
  private final Duration ioTimeout;
  private final Supplier<String> budgetName;
  private final HeldBatches held;
  /** How batches that are not compressed yet are compressed before they leave (NONE: they leave as they are). */
  private final BatchCompression compression;
  /**
   * Placing a body, announcing it, and what follows the announcement happen for one batch at a time: a transport
   * whose bodies follow their frames on a stream of their own (tcp) needs them in frame order.
   */
  private final ReentrantLock placing = new ReentrantLock();

  /**
   * {@code placer} null: every body travels inside its frame. {@code placerOwner} is closed after the held bodies
   * when this sender closes. {@code budgetName} names the budget a frame's memory comes from, for the error when
   * it is used up. {@code compression}: how batches not compressed yet are compressed before they leave; a batch
   * that is compressed already always leaves as it is.
   */
  public BatchSender(BodyPlacer placer, AutoCloseable placerOwner, boolean serializes, Frames frames,
      BufferAllocator allocator, Duration ioTimeout, long memoryBudget, Supplier<String> budgetName,
      BatchCompression compression) {
    this.compression = compression;
    this.placer = placer;
    this.placerOwner = placerOwner;
    this.serializes = serializes;
    this.frames = frames;
    this.allocator = allocator;
    this.ioTimeout = ioTimeout;
    this.budgetName = budgetName;
    this.held = placer == null ? null : new HeldBatches(placer, memoryBudget);
  }

  /** Sends one batch and closes {@code contents}. Runs on a sending thread; may block until {@code deadline}. */
  public void send(int streamId, long batchId, BatchContents contents, Deadline deadline) {
    if (compression == BatchCompression.NONE || BatchDecompressor.isCompressed(contents)) {
      try (contents) {
        write(streamId, batchId, contents, deadline);
      }
      return;
    }
    BatchContents compressed;
    try (BatchCompressor compressor = new BatchCompressor(compression, allocator)) {
      // Closes the plain contents; the compressed copy is one allocation exactly as long as its bytes.
      compressed = compressor.compress(contents, allocator);
    }
    try (compressed) {
      write(streamId, batchId, compressed, deadline);
    }
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
    if (body.length() <= BatchLayouts.INLINE_MAX || placer == null) {
      ByteBuf inline = BatchLayouts.copyInline(body, allocateInline(Math.toIntExact(body.length())));
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

  /** The frame bytes a batch of {@code contents} takes when it travels inside its frame (as it would here). */
  public long inlineFrameBytes(BatchContents contents) {
    return serializes ? IpcFrames.frameBytes(contents) : BatchLayouts.pack(contents).length();
  }

  /** Whether batches over the inline size leave their frames (a placer exists for this direction). */
  public boolean placesBodies() {
    return placer != null && !serializes;
  }

  /** The peer released a batch (piggybacked on NEXT). */
  public void released(int streamId, long batchId) {
    if (held != null) {
      held.release(streamId, batchId);
    }
  }

  /**
   * Memory for the bytes a BATCH frame carries, counted against the sender's budget until the frame is written.
   * Waits up to the I/O deadline for room, then fails with RESOURCE_EXHAUSTED naming the budget.
   */
  private ByteBuf allocateInline(int capacity) {
    Deadline deadline = Deadline.after(ioTimeout);
    while (true) {
      try {
        return AccountedByteBuf.allocate(allocator, capacity);
      } catch (OutOfMemoryException e) {
        if (deadline.isExpired()) {
          throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, budgetName.get() + " is used up: " + capacity
              + " bytes for a batch frame found no room in " + ioTimeout.toSeconds() + " s", e);
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

  /** The connection is over: every held body is freed, then the placer's owner closes. Idempotent. */
  @Override
  public void close() {
    try {
      if (held != null) {
        held.close();
      }
    } finally {
      if (placerOwner != null) {
        try {
          placerOwner.close();
        } catch (RuntimeException e) {
          throw e;
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      }
    }
  }
}
