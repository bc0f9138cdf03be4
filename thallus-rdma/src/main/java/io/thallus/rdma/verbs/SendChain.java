package io.thallus.rdma.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * The pushing verbs as a stateful call, like {@link ReadChain}: an array of {@code ibv_send_wr} and their
 * {@code ibv_sge} built once in native memory, rewritten in place and posted as one chain with one downcall.
 * <ul>
 *   <li>SEND (with or without an immediate value) consumes a receive the peer posted ({@link ReceiveSlots}) and lands
 *   in that receive's buffer: small notifications.</li>
 *   <li>RDMA WRITE puts bytes into the peer's memory registered with {@code REMOTE_WRITE}, silently for the peer;
 *   with an immediate value it also consumes one of the peer's receives, whose completion carries the value and the
 *   write's length: the data and its notification in one request, ordered after the data.</li>
 * </ul>
 * A request of zero bytes carries no buffer (a SEND with immediate and no payload is a bare 32-bit notification).
 * Only the chain's last request may be signalled; an unsignalled request keeps its send-queue slot until a later
 * signalled one completes, so a caller signals at least once every {@code sendRequests} requests of its queue pair.
 * Immediate values travel big-endian, as {@code __be32} says, so a C peer reads them with {@code ntohl}.
 */
public final class SendChain implements AutoCloseable {
  static final ValueLayout.OfInt IMMEDIATE = JAVA_INT.withOrder(ByteOrder.BIG_ENDIAN);

  private final QueuePair pair;
  private final int capacity;
  private final Arena arena = Arena.ofShared();
  private final MemorySegment requests;
  private final MemorySegment entries;
  private final MemorySegment badRequest;
  private int size;

  SendChain(QueuePair pair, int capacity) {
    if (capacity < 1) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "a send chain holds at least one request");
    }
    this.pair = pair;
    this.capacity = capacity;
    this.requests = arena.allocate(Layout.SEND_WR_SIZE * capacity, 8);
    this.entries = arena.allocate(Layout.SGE_SIZE * capacity, 8);
    this.badRequest = arena.allocate(ADDRESS);
    for (int i = 0; i < capacity; i++) {
      requests.set(ADDRESS, i * Layout.SEND_WR_SIZE + Layout.SEND_WR_SG_LIST,
          entries.asSlice(i * Layout.SGE_SIZE, Layout.SGE_SIZE));
    }
  }

  public int capacity() {
    return capacity;
  }

  public int size() {
    return size;
  }

  public void clear() {
    size = 0;
  }

  /** Appends a SEND of {@code length} bytes of local registered memory into the peer's next posted receive. */
  public void send(long localAddress, int localKey, int length) {
    append(Layout.WR_SEND, localAddress, localKey, length, 0, 0, 0);
  }

  /** Appends a SEND whose receive completion on the peer also carries {@code immediate}. */
  public void sendWithImmediate(long localAddress, int localKey, int length, int immediate) {
    append(Layout.WR_SEND_WITH_IMM, localAddress, localKey, length, 0, 0, immediate);
  }

  /** Appends an RDMA WRITE of {@code length} local bytes to the peer's {@code remoteAddress}; the peer sees nothing. */
  public void write(long localAddress, int localKey, int length, long remoteAddress, int remoteKey) {
    append(Layout.WR_RDMA_WRITE, localAddress, localKey, length, remoteAddress, remoteKey, 0);
  }

  /**
   * Appends an RDMA WRITE with immediate: the bytes land at {@code remoteAddress}, then one of the peer's posted
   * receives completes with {@code immediate} and the length written.
   */
  public void writeWithImmediate(long localAddress, int localKey, int length, long remoteAddress, int remoteKey,
      int immediate) {
    append(Layout.WR_RDMA_WRITE_WITH_IMM, localAddress, localKey, length, remoteAddress, remoteKey, immediate);
  }

  private void append(int opcode, long localAddress, int localKey, int length, long remoteAddress, int remoteKey,
      int immediate) {
    if (size == capacity) {
      throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, "send chain full at " + capacity + " requests");
    }
    if (length < 0) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "a negative length: " + length);
    }
    long wr = size * Layout.SEND_WR_SIZE;
    long sge = size * Layout.SGE_SIZE;
    entries.set(JAVA_LONG, sge + Layout.SGE_ADDR, localAddress);
    entries.set(JAVA_INT, sge + Layout.SGE_LENGTH, length);
    entries.set(JAVA_INT, sge + Layout.SGE_LKEY, localKey);
    requests.set(JAVA_INT, wr + Layout.SEND_WR_NUM_SGE, length == 0 ? 0 : 1);
    requests.set(JAVA_INT, wr + Layout.SEND_WR_OPCODE, opcode);
    requests.set(IMMEDIATE, wr + Layout.SEND_WR_IMM_DATA, immediate);
    requests.set(JAVA_LONG, wr + Layout.SEND_WR_REMOTE_ADDR, remoteAddress);
    requests.set(JAVA_INT, wr + Layout.SEND_WR_RKEY, remoteKey);
    size++;
  }

  /**
   * Posts the chain with {@code id} on every request; the last one is signalled if {@code signalled} (its completion,
   * or the first failure, then reports the whole chain: a send queue runs in order).
   */
  public void post(long id, boolean signalled) {
    if (size == 0) {
      throw ThallusException.of(StatusCode.FAILED_PRECONDITION, "nothing to post");
    }
    for (int i = 0; i < size; i++) {
      long wr = i * Layout.SEND_WR_SIZE;
      boolean last = i == size - 1;
      requests.set(JAVA_LONG, wr + Layout.SEND_WR_ID, id);
      requests.set(JAVA_INT, wr + Layout.SEND_WR_SEND_FLAGS, last && signalled ? Layout.SEND_SIGNALED : 0);
      requests.set(ADDRESS, wr + Layout.SEND_WR_NEXT,
          last ? MemorySegment.NULL : requests.asSlice((i + 1) * Layout.SEND_WR_SIZE, Layout.SEND_WR_SIZE));
    }
    pair.post(requests, badRequest, size + (size == 1 ? " send" : " sends"));
  }

  @Override
  public void close() {
    arena.close();
  }
}
