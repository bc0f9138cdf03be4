package io.thallus.rdma.verbs;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
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

  private final int capacity;
  private final SendRequests requests;
  private int size;

  SendChain(QueuePair pair, int capacity) {
    if (capacity < 1) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "a send chain holds at least one request");
    }
    this.capacity = capacity;
    this.requests = new SendRequests(pair, capacity, 1);
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
    requests.entry(size, 0, localAddress, length, localKey);
    requests.request(size, opcode, length == 0 ? 0 : 1, remoteAddress, remoteKey);
    requests.immediate(size, immediate);
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
    requests.post(size, id, signalled, size + (size == 1 ? " send" : " sends"));
  }

  @Override
  public void close() {
    requests.close();
  }
}
