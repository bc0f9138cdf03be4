package io.thallus.rdma.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.spi.Deadline;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A completion queue with its own completion channel. Waits are event-driven: arm the queue, poll once more (a
 * completion may have slipped in), then sleep in {@code poll(2)} on the channel's descriptor until an event or the
 * deadline. On a one-vCPU Soft-RoCE guest that costs nothing, where busy-polling would steal the CPU the kernel
 * needs to make progress. Used by one thread at a time.
 */
public final class CompletionQueue implements AutoCloseable {
  private static final int F_GETFL = 3;
  private static final int F_SETFL = 4;
  private static final int O_NONBLOCK = 2048;
  private static final int ACK_EVERY = 64;
  private static final int BATCH = 32;

  private final RdmaDevice device;
  private final Arena arena = Arena.ofShared();
  private final MemorySegment channel;
  final MemorySegment cq;
  private final int fd;
  private final MemorySegment completions = arena.allocate(Layout.WC_SIZE * BATCH, 8);
  private final MemorySegment eventCq = arena.allocate(ADDRESS);
  private final MemorySegment eventContext = arena.allocate(ADDRESS);
  private final MemorySegment pollFd = arena.allocate(Verbs.POLLFD_SIZE, 4);
  private final MemorySegment callState = arena.allocate(Verbs.CALL_STATE);
  private int unacknowledged;
  private boolean closed;

  private CompletionQueue(RdmaDevice device, MemorySegment channel, MemorySegment cq, int fd) {
    this.device = device;
    this.channel = channel;
    this.cq = cq;
    this.fd = fd;
    pollFd.set(JAVA_INT, 0, fd);
    pollFd.set(JAVA_SHORT, Verbs.POLLFD_EVENTS, Verbs.POLLIN);
  }

  static CompletionQueue create(RdmaDevice device, int entries) {
    Verbs verbs = Verbs.require();
    try (Arena scratch = Arena.ofConfined()) {
      MemorySegment state = scratch.allocate(Verbs.CALL_STATE);
      MemorySegment channel = verbs.createCompChannel(state, device.context);
      if (channel.equals(MemorySegment.NULL)) {
        throw Verbs.failure("ibv_create_comp_channel", Verbs.errno(state));
      }
      channel = channel.reinterpret(16);
      MemorySegment cq = verbs.createCq(state, device.context, entries, MemorySegment.NULL, channel, 0);
      if (cq.equals(MemorySegment.NULL)) {
        int errno = Verbs.errno(state);
        verbs.destroyCompChannel(channel);
        throw Verbs.failure("ibv_create_cq(" + entries + ")", errno);
      }
      cq = cq.reinterpret(16);
      if (cq.get(ADDRESS, Layout.CQ_CONTEXT).address() != device.context.address()
          || cq.get(ADDRESS, Layout.CQ_CHANNEL).address() != channel.address()
          || channel.get(ADDRESS, Layout.COMP_CHANNEL_CONTEXT).address() != device.context.address()) {
        verbs.destroyCq(cq);
        verbs.destroyCompChannel(channel);
        throw RdmaDevice.layoutMismatch("ibv_cq / ibv_comp_channel");
      }
      int fd = channel.get(JAVA_INT, Layout.COMP_CHANNEL_FD);
      int flags = Verbs.fcntl(fd, F_GETFL, 0);
      Verbs.fcntl(fd, F_SETFL, flags | O_NONBLOCK);
      return new CompletionQueue(device, channel, cq, fd);
    }
  }

  /** Takes up to {@value #BATCH} completions without waiting; returns how many (read them with the accessors). */
  public int poll() {
    int n;
    try {
      n = (int) Verbs.POLL_CQ.invokeExact(device.pollCq, cq, BATCH, completions);
    } catch (Throwable e) {
      throw new IllegalStateException("ibv_poll_cq failed to run: " + e, e);
    }
    if (n < 0) {
      throw ThallusException.of(StatusCode.INTERNAL, "ibv_poll_cq failed: " + n);
    }
    return n;
  }

  /** Waits, event-driven, until at least one completion is there or the deadline passes; returns how many. */
  public int await(Deadline deadline, String what) {
    while (true) {
      int n = poll();
      if (n > 0) {
        return n;
      }
      n = armAndPoll();
      if (n > 0) {
        return n;
      }
      if (deadline.remainingMillis() == 0) {
        throw deadline.expired(what);
      }
      sleep(deadline);
    }
  }

  /**
   * Asks for an event at the next completion, then polls once more (one may have come in before the request): the
   * first half of a wait, for a caller that must take completions under a lock of its own and sleep outside it.
   */
  public int armAndPoll() {
    arm();
    return poll();
  }

  /**
   * Sleeps in {@code poll(2)} on the completion channel until an event (the queue must have been armed since its
   * last poll) or the deadline; returns whether an event came. It may belong to a completion someone else has
   * taken already: poll, and arm again if there is none.
   */
  public boolean sleep(Deadline deadline) {
    long millis = deadline.remainingMillis();
    if (millis == 0) {
      return false;
    }
    int ready = Verbs.poll(callState, pollFd, 1L, (int) Math.min(millis, Integer.MAX_VALUE));
    if (ready > 0) {
      consumeEvent();
      return true;
    }
    return false;
  }

  private void arm() {
    int rc;
    try {
      rc = (int) Verbs.REQ_NOTIFY_CQ.invokeExact(device.reqNotifyCq, cq, 0);
    } catch (Throwable e) {
      throw new IllegalStateException("ibv_req_notify_cq failed to run: " + e, e);
    }
    if (rc != 0) {
      throw Verbs.failure("ibv_req_notify_cq", rc);
    }
  }

  private void consumeEvent() {
    Verbs verbs = Verbs.require();
    int rc = verbs.getCqEvent(callState, channel, eventCq, eventContext);
    if (rc == 0 && ++unacknowledged >= ACK_EVERY) {
      verbs.ackCqEvents(cq, unacknowledged);
      unacknowledged = 0;
    }
  }

  public long workRequestId(int index) {
    return completions.get(JAVA_LONG, index * Layout.WC_SIZE + Layout.WC_ID);
  }

  public int status(int index) {
    return completions.get(JAVA_INT, index * Layout.WC_SIZE + Layout.WC_STATUS);
  }

  public int opcode(int index) {
    return completions.get(JAVA_INT, index * Layout.WC_SIZE + Layout.WC_OPCODE);
  }

  /**
   * Bytes received: for a receive, what the SEND carried into its buffer, or what the WRITE with immediate put into
   * this side's memory; for a READ, the bytes read. Valid for successful completions only.
   */
  public int byteLength(int index) {
    return completions.get(JAVA_INT, index * Layout.WC_SIZE + Layout.WC_BYTE_LEN);
  }

  /** Whether a successful completion carries an immediate value (a SEND or WRITE with immediate, received). */
  public boolean hasImmediate(int index) {
    return (completions.get(JAVA_INT, index * Layout.WC_SIZE + Layout.WC_FLAGS) & Layout.WC_WITH_IMM) != 0;
  }

  /** The immediate value the peer posted, as it posted it (the wire's big-endian order undone). */
  public int immediate(int index) {
    return completions.get(SendChain.IMMEDIATE, index * Layout.WC_SIZE + Layout.WC_IMM_DATA);
  }

  /** The local queue pair the completion belongs to: where several share this queue, this tells them apart. */
  public int queuePairNumber(int index) {
    return completions.get(JAVA_INT, index * Layout.WC_SIZE + Layout.WC_QP_NUM);
  }

  /** A successful receive: a SEND landed in a posted buffer, or a WRITE with immediate consumed a receive. */
  public boolean isReceive(int index) {
    return (opcode(index) & Layout.WC_RECV) != 0;
  }

  /** A successful receive that a peer's RDMA WRITE with immediate consumed (the data is in this side's memory). */
  public boolean isWriteWithImmediate(int index) {
    return opcode(index) == Layout.WC_RECV_RDMA_WITH_IMM;
  }

  /** Throws the completion's failure, named, unless it succeeded. */
  public void check(int index, String what) {
    int status = status(index);
    if (status != 0) {
      throw WorkCompletions.failure(status, what);
    }
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    Verbs verbs = Verbs.require();
    if (unacknowledged > 0) {
      verbs.ackCqEvents(cq, unacknowledged);
    }
    verbs.destroyCq(cq);
    verbs.destroyCompChannel(channel);
    arena.close();
  }
}
