package io.thallus.rdma.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A stateful verb call, as jVerbs named it: an array of RDMA READ work requests and their scatter-gather entries
 * built once in native memory, rewritten in place for each use and posted as one chain with only the last request
 * signalled. Nothing is allocated and nothing crosses JNI on the hot path: {@link #add} writes a few fields and
 * {@link #post} makes one downcall to the provider's {@code post_send}.
 */
public final class ReadChain implements AutoCloseable {
  private final QueuePair pair;
  private final int capacity;
  private final int scatter;
  private final Arena arena = Arena.ofShared();
  private final MemorySegment requests;
  private final MemorySegment entries;
  private final MemorySegment badRequest;
  private int size;

  ReadChain(QueuePair pair, int capacity) {
    this.pair = pair;
    this.capacity = capacity;
    this.scatter = Math.max(1, pair.capacity().scatterGather());
    this.requests = arena.allocate(Layout.SEND_WR_SIZE * capacity, 8);
    this.entries = arena.allocate(Layout.SGE_SIZE * capacity * scatter, 8);
    this.badRequest = arena.allocate(ADDRESS);
    for (int i = 0; i < capacity; i++) {
      long wr = i * Layout.SEND_WR_SIZE;
      requests.set(ADDRESS, wr + Layout.SEND_WR_SG_LIST,
          entries.asSlice(i * scatter * Layout.SGE_SIZE, scatter * Layout.SGE_SIZE));
      requests.set(JAVA_INT, wr + Layout.SEND_WR_NUM_SGE, 1);
      requests.set(JAVA_INT, wr + Layout.SEND_WR_OPCODE, Layout.WR_RDMA_READ);
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

  /** Appends one read: {@code length} bytes from the peer's {@code remoteAddress} into local registered memory. */
  public void add(long localAddress, int localKey, long remoteAddress, int remoteKey, int length) {
    if (size == capacity) {
      throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, "read chain full at " + capacity + " requests");
    }
    long wr = size * Layout.SEND_WR_SIZE;
    setEntry(size * scatter, localAddress, length, localKey);
    requests.set(JAVA_INT, wr + Layout.SEND_WR_NUM_SGE, 1);
    requests.set(JAVA_LONG, wr + Layout.SEND_WR_REMOTE_ADDR, remoteAddress);
    requests.set(JAVA_INT, wr + Layout.SEND_WR_RKEY, remoteKey);
    size++;
  }

  /**
   * Appends one read of a contiguous remote range that lands in several local buffers, in order: a
   * scatter-gather list of up to the queue pair's {@code scatterGather} entries, all under {@code localKey}.
   */
  public void addScattered(long remoteAddress, int remoteKey, int localKey, long[] localAddresses, int[] lengths) {
    if (size == capacity) {
      throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, "read chain full at " + capacity + " requests");
    }
    if (localAddresses.length != lengths.length || lengths.length == 0 || lengths.length > scatter) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "a read scatters into 1.." + scatter
          + " local buffers, got " + lengths.length);
    }
    for (int i = 0; i < lengths.length; i++) {
      setEntry(size * scatter + i, localAddresses[i], lengths[i], localKey);
    }
    long wr = size * Layout.SEND_WR_SIZE;
    requests.set(JAVA_INT, wr + Layout.SEND_WR_NUM_SGE, lengths.length);
    requests.set(JAVA_LONG, wr + Layout.SEND_WR_REMOTE_ADDR, remoteAddress);
    requests.set(JAVA_INT, wr + Layout.SEND_WR_RKEY, remoteKey);
    size++;
  }

  private void setEntry(int index, long address, int length, int key) {
    long sge = index * Layout.SGE_SIZE;
    entries.set(JAVA_LONG, sge + Layout.SGE_ADDR, address);
    entries.set(JAVA_INT, sge + Layout.SGE_LENGTH, length);
    entries.set(JAVA_INT, sge + Layout.SGE_LKEY, key);
  }

  /** Posts the chain; its last request carries {@code id} and is the only one signalled. */
  public void post(long id) {
    if (size == 0) {
      throw ThallusException.of(StatusCode.FAILED_PRECONDITION, "nothing to post");
    }
    for (int i = 0; i < size; i++) {
      long wr = i * Layout.SEND_WR_SIZE;
      boolean last = i == size - 1;
      requests.set(JAVA_LONG, wr + Layout.SEND_WR_ID, id);
      requests.set(JAVA_INT, wr + Layout.SEND_WR_SEND_FLAGS, last ? Layout.SEND_SIGNALED : 0);
      requests.set(ADDRESS, wr + Layout.SEND_WR_NEXT,
          last ? MemorySegment.NULL : requests.asSlice((i + 1) * Layout.SEND_WR_SIZE, Layout.SEND_WR_SIZE));
    }
    pair.post(requests, badRequest, size + " reads");
  }

  @Override
  public void close() {
    arena.close();
  }
}
