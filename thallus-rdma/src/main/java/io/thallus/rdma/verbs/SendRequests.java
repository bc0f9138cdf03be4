package io.thallus.rdma.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The native memory of a stateful chain of send-queue work requests ({@link ReadChain}, {@link SendChain}): an
 * array of {@code ibv_send_wr}, each pointing at its own {@code scatter} {@code ibv_sge} entries, allocated once and
 * rewritten field by field; {@link #post} links the first {@code size} requests and posts them with one downcall.
 */
final class SendRequests implements AutoCloseable {
  private final QueuePair pair;
  private final int scatter;
  private final Arena arena = Arena.ofShared();
  private final MemorySegment requests;
  private final MemorySegment entries;
  private final MemorySegment badRequest;

  SendRequests(QueuePair pair, int capacity, int scatter) {
    this.pair = pair;
    this.scatter = scatter;
    this.requests = arena.allocate(Layout.SEND_WR_SIZE * capacity, 8);
    this.entries = arena.allocate(Layout.SGE_SIZE * capacity * scatter, 8);
    this.badRequest = arena.allocate(ADDRESS);
    for (int i = 0; i < capacity; i++) {
      requests.set(ADDRESS, i * Layout.SEND_WR_SIZE + Layout.SEND_WR_SG_LIST,
          entries.asSlice((long) i * scatter * Layout.SGE_SIZE, scatter * Layout.SGE_SIZE));
    }
  }

  /** Request {@code request}'s {@code entry}-th local buffer. */
  void entry(int request, int entry, long address, int length, int key) {
    long sge = ((long) request * scatter + entry) * Layout.SGE_SIZE;
    entries.set(JAVA_LONG, sge + Layout.SGE_ADDR, address);
    entries.set(JAVA_INT, sge + Layout.SGE_LENGTH, length);
    entries.set(JAVA_INT, sge + Layout.SGE_LKEY, key);
  }

  /** Request {@code request}'s verb, how many of its entries it uses, and where in the peer's memory it goes. */
  void request(int request, int opcode, int entries, long remoteAddress, int remoteKey) {
    long wr = request * Layout.SEND_WR_SIZE;
    requests.set(JAVA_INT, wr + Layout.SEND_WR_OPCODE, opcode);
    requests.set(JAVA_INT, wr + Layout.SEND_WR_NUM_SGE, entries);
    requests.set(JAVA_LONG, wr + Layout.SEND_WR_REMOTE_ADDR, remoteAddress);
    requests.set(JAVA_INT, wr + Layout.SEND_WR_RKEY, remoteKey);
  }

  /** The immediate value a SEND or WRITE with immediate carries (big-endian, as {@code __be32} says). */
  void immediate(int request, int value) {
    requests.set(SendChain.IMMEDIATE, request * Layout.SEND_WR_SIZE + Layout.SEND_WR_IMM_DATA, value);
  }

  /** Links the first {@code size} requests, all with {@code id}, the last signalled if asked, and posts them. */
  void post(int size, long id, boolean signalLast, String what) {
    for (int i = 0; i < size; i++) {
      long wr = i * Layout.SEND_WR_SIZE;
      boolean last = i == size - 1;
      requests.set(JAVA_LONG, wr + Layout.SEND_WR_ID, id);
      requests.set(JAVA_INT, wr + Layout.SEND_WR_SEND_FLAGS, last && signalLast ? Layout.SEND_SIGNALED : 0);
      requests.set(ADDRESS, wr + Layout.SEND_WR_NEXT,
          last ? MemorySegment.NULL : requests.asSlice((i + 1) * Layout.SEND_WR_SIZE, Layout.SEND_WR_SIZE));
    }
    pair.post(requests, badRequest, what);
  }

  @Override
  public void close() {
    arena.close();
  }
}
