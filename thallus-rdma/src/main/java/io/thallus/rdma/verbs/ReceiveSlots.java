package io.thallus.rdma.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Receive requests ({@code ibv_recv_wr}), one per slot, built once in native memory with their scatter entries and
 * reposted in place: a peer's SEND lands in the buffer of the receive it consumes, and its WRITE with immediate
 * consumes one without touching the buffer (a slot of zero bytes serves those). Receives complete in the order they
 * were posted. Each slot's completion carries {@link #workRequestId(int)}, which {@link #isReceive} and
 * {@link #slotOf} read back, so receive completions can share a completion queue with sends (a failed completion's
 * opcode is undefined; its id is not). A slot must not be posted again before its completion is taken. Used by one
 * thread at a time.
 */
public final class ReceiveSlots implements AutoCloseable {
  /** Marks receive ids apart from send ids: a send's id never has this bit (callers number sends from zero). */
  private static final long RECEIVE = 1L << 62;

  private final QueuePair pair;
  private final int slots;
  private final Arena arena = Arena.ofShared();
  private final MemorySegment requests;
  private final MemorySegment entries;
  private final MemorySegment badRequest;

  ReceiveSlots(QueuePair pair, int slots) {
    this.pair = pair;
    this.slots = slots;
    this.requests = arena.allocate(Layout.RECV_WR_SIZE * slots, 8);
    this.entries = arena.allocate(Layout.SGE_SIZE * slots, 8);
    this.badRequest = arena.allocate(ADDRESS);
    for (int i = 0; i < slots; i++) {
      long wr = i * Layout.RECV_WR_SIZE;
      requests.set(JAVA_LONG, wr + Layout.RECV_WR_ID, workRequestId(i));
      requests.set(ADDRESS, wr + Layout.RECV_WR_SG_LIST, entries.asSlice(i * Layout.SGE_SIZE, Layout.SGE_SIZE));
      requests.set(JAVA_INT, wr + Layout.RECV_WR_NUM_SGE, 0);
    }
  }

  public int slots() {
    return slots;
  }

  /** The id a slot's receive completes with. */
  public static long workRequestId(int slot) {
    return RECEIVE | slot;
  }

  /** Whether a completion's id is a receive's. */
  public static boolean isReceive(long workRequestId) {
    return (workRequestId & RECEIVE) != 0;
  }

  public static int slotOf(long workRequestId) {
    return (int) (workRequestId & ~RECEIVE);
  }

  /** Gives {@code slot} a buffer of local registered memory (writable locally); zero bytes: no buffer. */
  public void set(int slot, long address, int localKey, int length) {
    check(slot);
    if (length < 0) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "a negative length: " + length);
    }
    long sge = slot * Layout.SGE_SIZE;
    entries.set(JAVA_LONG, sge + Layout.SGE_ADDR, address);
    entries.set(JAVA_INT, sge + Layout.SGE_LENGTH, length);
    entries.set(JAVA_INT, sge + Layout.SGE_LKEY, localKey);
    requests.set(JAVA_INT, slot * Layout.RECV_WR_SIZE + Layout.RECV_WR_NUM_SGE, length == 0 ? 0 : 1);
  }

  /** Posts one slot's receive. */
  public void post(int slot) {
    check(slot);
    MemorySegment request = requests.asSlice(slot * Layout.RECV_WR_SIZE, Layout.RECV_WR_SIZE);
    request.set(ADDRESS, Layout.RECV_WR_NEXT, MemorySegment.NULL);
    pair.postReceive(request, badRequest, "receive slot " + slot);
  }

  /** Posts every slot's receive, in slot order, with one downcall. */
  public void postAll() {
    for (int i = 0; i < slots; i++) {
      long wr = i * Layout.RECV_WR_SIZE;
      requests.set(ADDRESS, wr + Layout.RECV_WR_NEXT, i == slots - 1 ? MemorySegment.NULL
          : requests.asSlice((i + 1) * Layout.RECV_WR_SIZE, Layout.RECV_WR_SIZE));
    }
    pair.postReceive(requests, badRequest, slots + " receives");
  }

  private void check(int slot) {
    if (slot < 0 || slot >= slots) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "no receive slot " + slot + " of " + slots);
    }
  }

  @Override
  public void close() {
    arena.close();
  }
}
