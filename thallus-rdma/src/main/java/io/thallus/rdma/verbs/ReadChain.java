package io.thallus.rdma.verbs;

import io.thallus.StatusCode;
import io.thallus.ThallusException;

/**
 * A stateful verb call, as jVerbs named it: an array of RDMA READ work requests and their scatter-gather entries
 * built once in native memory, rewritten in place for each use and posted as one chain with only the last request
 * signalled. Nothing is allocated and nothing crosses JNI on the hot path: {@link #add} writes a few fields and
 * {@link #post} makes one downcall to the provider's {@code post_send}.
 */
public final class ReadChain implements AutoCloseable {
  private final int capacity;
  private final int scatter;
  private final SendRequests requests;
  private int size;

  ReadChain(QueuePair pair, int capacity) {
    this.capacity = capacity;
    this.scatter = Math.max(1, pair.capacity().scatterGather());
    this.requests = new SendRequests(pair, capacity, scatter);
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
    requests.entry(size, 0, localAddress, length, localKey);
    requests.request(size, Layout.WR_RDMA_READ, 1, remoteAddress, remoteKey);
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
      requests.entry(size, i, localAddresses[i], lengths[i], localKey);
    }
    requests.request(size, Layout.WR_RDMA_READ, lengths.length, remoteAddress, remoteKey);
    size++;
  }

  /** Posts the chain; its last request carries {@code id} and is the only one signalled. */
  public void post(long id) {
    if (size == 0) {
      throw ThallusException.of(StatusCode.FAILED_PRECONDITION, "nothing to post");
    }
    requests.post(size, id, true, size + " reads");
  }

  @Override
  public void close() {
    requests.close();
  }
}
