package io.thallus.rdma.push;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.rdma.verbs.MemoryRegion;
import io.thallus.rdma.verbs.ProtectionDomain;
import io.thallus.rdma.verbs.QueuePair;
import io.thallus.spi.Deadline;
import java.util.EnumSet;

/**
 * The pushing side of a push channel: writes messages with RDMA WRITE with immediate into the ring a
 * {@link PushReceiver} registered and advertised ({@link PushRing}), as long as it holds credit, and takes credit
 * back from the receiver's notifications.
 *
 * <p>The protocol. The sender places messages one after another in the ring; one that does not fit before the ring's
 * end starts again at offset 0 (the tail is skipped). Each message is one WRITE with immediate whose value is its
 * offset in the ring; its completion on the receiver carries that offset and the length written, and consumes one
 * of the receiver's posted receives. The receiver releases messages in order and returns credit with a SEND with
 * immediate and no payload, whose value is how many messages it has released in all (modulo 2^32); the sender knows
 * where each message ended, so that count frees bytes and a message slot at once. A message needs credit for its
 * bytes (the ring's free space, counting a skipped tail) and for one of the receiver's receives; the receiver
 * returns credit in batches ({@link PushReceiver}).
 *
 * <pre>
 *   sender                                              receiver
 *   WRITE_WITH_IMM(bytes -> ring + off, imm = off) ---> RECV completion(imm = off, byte_len = n): message
 *   ...                                                 release(message) in order
 *   RECV completion(imm = released so far)  <---------- SEND_WITH_IMM(no bytes, imm = released so far)
 * </pre>
 *
 * A message's source bytes must stay as they are until it is written: {@link #isWritten} and {@link #awaitWritten}
 * say when (writes are signalled every few posts, and a wait for one that was not signalled posts an empty signalled
 * write behind it). Used by one thread at a time (the exchange's network thread); nothing is allocated per message.
 */
public final class PushSender implements AutoCloseable {
  private final PushConnection connection;
  private final int maxMessages;
  private final long[] ends;
  private final PushConnection.Events events =
      (write, byteLength, hasImmediate, immediate) -> credit(write, hasImmediate, immediate);
  private PushRing ring;
  private long head;
  private long tail;
  private long pushed;
  private long released;
  private int lastOffset;

  private PushSender(PushConnection connection, int maxMessages) {
    this.connection = connection;
    this.maxMessages = maxMessages;
    this.ends = new long[maxMessages];
  }

  /**
   * A sender whose queue pair takes up to {@code maxMessages} messages in flight (its peer's ring may allow fewer) in
   * {@code domain}, where the messages' source memory is registered.
   */
  public static PushSender create(ProtectionDomain domain, int maxMessages) {
    if (maxMessages < 1 || maxMessages > 1 << 16) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "a push sender takes 1..65536 messages in flight, not "
          + maxMessages);
    }
    return new PushSender(new PushConnection(domain, maxMessages + 2, maxMessages, "push sender"), maxMessages);
  }

  public QueuePair.Endpoint endpoint(QueuePair.ConnectOptions options) {
    return connection.endpoint(options);
  }

  /** Connects to the receiver's queue pair and takes its ring; the receiver may neither read nor write here. */
  public void connect(QueuePair.Endpoint receiver, QueuePair.ConnectOptions options, PushRing ring) {
    if (ring.messages() > maxMessages) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "the ring takes " + ring.messages()
          + " messages in flight, this sender " + maxMessages);
    }
    connection.connect(receiver, options, EnumSet.noneOf(MemoryRegion.Access.class));
    this.ring = ring;
  }

  /**
   * Pushes {@code length} bytes of local registered memory ({@code localKey}) if credit allows it now, and returns the
   * push's ticket (for {@link #isWritten}), or -1 where the receiver has no room: the caller keeps the message for
   * later (or for a pull), as the exchange does with a reducer that is full.
   */
  public long tryPush(long address, int localKey, int length) {
    requireConnected(length);
    connection.drain(events);
    return fits(length) && connection.hasSendRoom() ? write(address, localKey, length) : -1;
  }

  /** Pushes as {@link #tryPush} does, waiting (event-driven) for credit until the deadline. */
  public long push(long address, int localKey, int length, Deadline deadline) {
    requireConnected(length);
    connection.drain(events);
    while (!fits(length) || !connection.hasSendRoom()) {
      connection.await(deadline, "credit for a message of " + length + " bytes", events);
    }
    return write(address, localKey, length);
  }

  /** Whether the push with this ticket has been written (its source bytes may be reused). */
  public boolean isWritten(long ticket) {
    return connection.completed() >= ticket;
  }

  /** Waits until the push with this ticket, and every one before it, is written. */
  public void awaitWritten(long ticket, Deadline deadline) {
    connection.drain(events);
    if (connection.completed() >= ticket) {
      return;
    }
    if (ticket > connection.posted()) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "no push has ticket " + ticket);
    }
    if (!connection.lastPostSignalled()) {
      while (!connection.hasSendRoom()) {
        connection.await(deadline, "room to flush the writes", events);
      }
      connection.postEmptyWrite(ring.address(), ring.remoteKey());
    }
    while (connection.completed() < ticket) {
      connection.await(deadline, "push " + ticket + " written", events);
    }
  }

  /** Messages pushed and not yet released by the receiver. */
  public long inFlight() {
    return pushed - released;
  }

  /** Messages pushed so far. */
  public long pushed() {
    return pushed;
  }

  /**
   * Where in the ring the last push was written (0 after a skipped tail), for a caller that names the message to
   * the receiver on another channel as well (the rdma transport's BATCH descriptors).
   */
  public int lastOffset() {
    if (pushed == 0) {
      throw ThallusException.of(StatusCode.FAILED_PRECONDITION, "nothing was pushed yet");
    }
    return lastOffset;
  }

  private void requireConnected(int length) {
    connection.checkUsable();
    if (ring == null) {
      throw ThallusException.of(StatusCode.FAILED_PRECONDITION, "the push sender is not connected");
    }
    if (length < 0 || length > ring.bytes()) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "a message of " + length + " bytes does not fit a ring "
          + "of " + ring.bytes());
    }
  }

  /** Where a message of {@code length} bytes starts in the ring's running positions: here, or at the next offset 0. */
  private long start(int length) {
    long offset = head % ring.bytes();
    return length <= ring.bytes() - offset ? head : head + ring.bytes() - offset;
  }

  private boolean fits(int length) {
    if (pushed - released >= ring.messages()) {
      return false;
    }
    // An empty ring takes any message; one that skips the tail may then span more than the ring until released.
    return pushed == released || start(length) + length - tail <= ring.bytes();
  }

  private long write(long address, int localKey, int length) {
    long start = start(length);
    int offset = (int) (start % ring.bytes());
    long ticket = connection.postWriteWithImmediate(address, localKey, length, ring.address() + offset,
        ring.remoteKey(), offset, false);
    head = start + length;
    lastOffset = offset;
    ends[(int) (pushed % maxMessages)] = head;
    pushed++;
    return ticket;
  }

  private void credit(boolean write, boolean hasImmediate, int immediate) {
    long count = released + ((immediate - (int) released) & 0xffffffffL);
    if (write || !hasImmediate || count > pushed) {
      throw ThallusException.of(StatusCode.PROTOCOL_ERROR, "push sender: a credit for " + count
          + " messages released, of " + pushed + " pushed");
    }
    if (count > released) {
      tail = ends[(int) ((count - 1) % maxMessages)];
      released = count;
    }
  }

  @Override
  public void close() {
    connection.close();
  }
}
