package io.thallus.rdma.push;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.rdma.verbs.MemoryRegion;
import io.thallus.rdma.verbs.ProtectionDomain;
import io.thallus.rdma.verbs.QueuePair;
import io.thallus.spi.Deadline;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.EnumSet;

/**
 * The receiving side of a push channel: a ring of its own memory, registered for its one peer to write into, and
 * the receives that the peer's writes with immediate consume. Messages come out in the order they were pushed, as
 * views of the ring; {@link #release} gives their bytes back, in the same order, and returns credit to the sender
 * (see {@link PushSender} for the protocol). Credit goes back in batches, a quarter of the ring's bytes or messages
 * at a time, and at once whenever this side has caught up with everything that arrived, so a sender waiting for
 * room is never left waiting on a batch that will not fill. (Credit only when the sender asks, tried instead of the
 * catching-up rule, kept more of its pipe empty: 0.29-0.31x the bare verb's rate against 0.33-0.38x at 64 KiB in
 * the guest.) Used by one thread at a time.
 */
public final class PushReceiver implements AutoCloseable {
  /** A message in the ring: valid until it is released. */
  public static final class Message {
    private final long sequence;
    private final int offset;
    private final long end;
    private final MemorySegment bytes;

    private Message(long sequence, int offset, long end, MemorySegment bytes) {
      this.sequence = sequence;
      this.offset = offset;
      this.end = end;
      this.bytes = bytes;
    }

    /** 0 for the first message pushed, then 1, 2, ... */
    public long sequence() {
      return sequence;
    }

    /** Where it lies in the ring. */
    public int offset() {
      return offset;
    }

    public int length() {
      return (int) bytes.byteSize();
    }

    /** The message's bytes in the ring, where the sender wrote them (no copy). */
    public MemorySegment bytes() {
      return bytes;
    }
  }

  private final PushConnection connection;
  private final Arena arena;
  private final MemorySegment memory;
  private final MemoryRegion region;
  private final PushRing ring;
  private final ArrayDeque<Message> arrived = new ArrayDeque<>();
  private final int creditEveryMessages;
  private final long creditEveryBytes;
  private final PushConnection.Events events = (write, byteLength, hasImmediate, immediate) -> {
    if (!write) {
      throw ThallusException.of(StatusCode.PROTOCOL_ERROR, "push receiver: a SEND where only writes come");
    }
    arrive(byteLength, hasImmediate, immediate);
  };

  private long expected;
  private long arrivals;
  private long released;
  private long releasedEnd;
  private long credited;
  private long creditedEnd;

  private PushReceiver(PushConnection connection, Arena arena, MemorySegment memory, MemoryRegion region,
      int messages) {
    this.connection = connection;
    this.arena = arena;
    this.memory = memory;
    this.region = region;
    this.ring = new PushRing(memory.address(), region.remoteKey(), (int) memory.byteSize(), messages);
    this.creditEveryMessages = Math.max(1, messages / 4);
    this.creditEveryBytes = Math.max(1, memory.byteSize() / 4);
  }

  /** A receiver with a ring of {@code bytes} (page-aligned, registered once) taking up to {@code messages} at once. */
  public static PushReceiver create(ProtectionDomain domain, int bytes, int messages) {
    if (bytes < 1 || messages < 1 || messages > 1 << 16) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "a push ring of 1 byte or more takes 1..65536 "
          + "messages, not " + bytes + " bytes and " + messages + " messages");
    }
    Arena arena = Arena.ofShared();
    MemoryRegion region = null;
    try {
      MemorySegment memory = arena.allocate(bytes, 4096);
      region = domain.register(memory, EnumSet.of(MemoryRegion.Access.LOCAL_WRITE,
          MemoryRegion.Access.REMOTE_WRITE));
      // Credit sends: at most one per released message, signalled every few.
      PushConnection connection = new PushConnection(domain, messages + 2, messages, "push receiver");
      return new PushReceiver(connection, arena, memory, region, messages);
    } catch (RuntimeException e) {
      if (region != null) {
        region.close();
      }
      arena.close();
      throw e;
    }
  }

  /** What to advertise to the sender. */
  public PushRing ring() {
    return ring;
  }

  public QueuePair.Endpoint endpoint(QueuePair.ConnectOptions options) {
    return connection.endpoint(options);
  }

  /**
   * Connects to the sender's queue pair, letting it write: into the ring, the only memory its key reaches (see
   * {@link PushRing} for why each sending peer needs a domain of its own).
   */
  public void connect(QueuePair.Endpoint sender, QueuePair.ConnectOptions options) {
    connection.connect(sender, options, EnumSet.of(MemoryRegion.Access.REMOTE_WRITE));
  }

  /** The next message that has arrived, or null; also sends credit that was held back. */
  public Message poll() {
    connection.drain(events);
    sendCreditIfDue();
    return arrived.poll();
  }

  /** The next message, waiting for it (event-driven) until the deadline. */
  public Message await(Deadline deadline) {
    Message next = poll();
    while (next == null) {
      connection.await(deadline, "a pushed message", events);
      sendCreditIfDue();
      next = arrived.poll();
    }
    return next;
  }

  /** Gives a message's bytes back to the sender; messages are released in the order they arrived. */
  public void release(Message message) {
    connection.checkUsable();
    if (message.sequence != released) {
      throw ThallusException.of(StatusCode.FAILED_PRECONDITION, "push messages are released in order: message "
          + released + " first, not " + message.sequence);
    }
    released++;
    releasedEnd = message.end;
    sendCreditIfDue();
  }

  /** Messages taken from the ring and not released. */
  public long held() {
    return arrivals - arrived.size() - released;
  }

  private void arrive(int length, boolean hasImmediate, int offset) {
    long position = expected % ring.bytes();
    long start;
    if (hasImmediate && offset == position) {
      start = expected;
    } else if (hasImmediate && offset == 0) {
      start = expected + ring.bytes() - position; // the sender skipped the ring's tail
    } else {
      throw ThallusException.of(StatusCode.PROTOCOL_ERROR, "push receiver: a message at offset "
          + Integer.toUnsignedString(offset) + " where " + (position == 0 ? "0"
              : position + " (or 0, after the ring's tail)") + " was due");
    }
    if (length < 0 || offset + (long) length > ring.bytes()) {
      throw ThallusException.of(StatusCode.PROTOCOL_ERROR, "push receiver: a message of " + length
          + " bytes at offset " + offset + " overruns the ring");
    }
    expected = start + length;
    arrived.add(new Message(arrivals++, offset, expected, memory.asSlice(offset, length)));
  }

  private void sendCreditIfDue() {
    long pending = released - credited;
    if (pending == 0) {
      return;
    }
    boolean caughtUp = released == arrivals;
    if (!caughtUp && pending < creditEveryMessages && releasedEnd - creditedEnd < creditEveryBytes) {
      return;
    }
    if (!connection.hasSendRoom()) {
      connection.drain(events); // the next poll or release tries again; the count it carries only grows
      if (!connection.hasSendRoom()) {
        return;
      }
    }
    connection.postNotification((int) released, false);
    credited = released;
    creditedEnd = releasedEnd;
  }

  @Override
  public void close() {
    connection.close();
    region.close();
    arena.close();
  }
}
