package io.thallus.internal.server;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.util.ReferenceCountUtil;
import io.thallus.internal.batch.BatchSender;
import io.thallus.internal.protocol.Message;
import io.thallus.spi.BatchHeader;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The frames one connection's streams, ingests and handler send, and the one rule for when they leave the socket.
 * Any thread queues; the event loop writes, in queue order, everything queued with one flush: from a stream's thread
 * that is one task for the loop (Netty would make one per write and one per flush, each a separate socket write once
 * the loop has woken), on the loop itself it writes at once.
 *
 * <p>When queued frames leave:
 * <ul>
 *   <li>an answer or a last word ({@link #send}: WELCOME, NEXT, END, ERROR) — now, with whatever waits before it;
 *   <li>a BATCH whose body travels outside its frame — now: the body may wait for the client to read the frame
 *       (tcp's data connection);
 *   <li>a full BATCH inside its frame ({@link #afterBatch}) — now: more are likely to follow, and the client should
 *       have this one while the next is made;
 *   <li>OPENED ({@link #hold}) and a short BATCH inside its frame (most likely the last) — with the next of the
 *       above, or when the stream stops to wait ({@link #beforeWaiting}); so a small result's OPENED, BATCH and
 *       END reach the client in one packet and wake it once.
 * </ul>
 */
final class Outbox {
  private final Channel channel;
  private final Queue<Message> queued = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean drainScheduled = new AtomicBoolean();
  /** Writes BATCH frames for the connection's {@link BatchSender}. */
  private final BatchSender.Frames frames = this::batch;

  Outbox(Channel channel) {
    this.channel = channel;
  }

  /** Queues {@code message} and has it written, behind what is already queued, now. */
  void send(Message message) {
    queued.add(message);
    flush();
  }

  /** Queues {@code message} to leave with the next flush. */
  void hold(Message message) {
    queued.add(message);
  }

  /** Where the connection's sender writes its BATCH frames. */
  BatchSender.Frames frames() {
    return frames;
  }

  private void batch(BatchHeader header, ByteBuf inline) {
    queued.add(new Message.Batch(header, inline));
    if (!inline.isReadable()) {
      flush();
    }
  }

  /** A stream has queued a batch of {@code rows} rows where it asked for {@code batchRows}. */
  void afterBatch(int rows, int batchRows) {
    if (rows >= batchRows) {
      flush();
    }
  }

  /** A stream stops for now (it waits for a credit, for memory, for its turn, or it is over). */
  void beforeWaiting() {
    flush();
  }

  /** Whether the connection takes more bytes now; a stream produces nothing while it does not. */
  boolean isWritable() {
    return channel.isWritable() || !channel.isActive();
  }

  private void flush() {
    if (queued.isEmpty() || !drainScheduled.compareAndSet(false, true)) {
      return;
    }
    if (channel.eventLoop().inEventLoop()) {
      drain();
      return;
    }
    try {
      channel.eventLoop().execute(this::drain);
    } catch (RejectedExecutionException loopGone) {
      drainScheduled.set(false);
      drop();
    }
  }

  private void drain() {
    drainScheduled.set(false);
    boolean wrote = false;
    for (Message message = queued.poll(); message != null; message = queued.poll()) {
      // A closed channel releases what it is given (a BATCH's inline bytes), as writeAndFlush did.
      channel.write(message, channel.voidPromise());
      wrote = true;
    }
    if (wrote) {
      channel.flush();
    }
  }

  /**
   * Runs {@code last} on the event loop once the frames queued before it have been written (or, with the loop gone,
   * at once); frames still queued then (none should be) are freed first, since they count against memory
   * {@code last} may free.
   */
  void thenOnLoop(Runnable last) {
    Runnable dropThenRun = () -> {
      drop();
      last.run();
    };
    try {
      if (channel.eventLoop().inEventLoop()) {
        dropThenRun.run();
      } else {
        channel.eventLoop().execute(dropThenRun);
      }
    } catch (RejectedExecutionException loopGone) {
      dropThenRun.run();
    }
  }

  /** Frees queued frames that will never be written. */
  private void drop() {
    for (Message message = queued.poll(); message != null; message = queued.poll()) {
      ReferenceCountUtil.release(message);
    }
  }
}
