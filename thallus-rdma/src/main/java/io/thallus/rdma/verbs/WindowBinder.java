package io.thallus.rdma.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.spi.Deadline;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Binds and invalidates memory windows through one queue pair's send queue: one work request built once in native
 * memory and rewritten per call, like {@link ReadChain}. A bind waits for its completion (within the deadline),
 * because a key must not reach the peer before the device has granted it. An invalidation is posted and its
 * completion collected later (by the next call, or once {@value #UNREAPED_MAX} are outstanding): the device runs the
 * send queue in order, so a window is free again before any later bind of it, and waiting on every release cost
 * a wake-up per batch. The queue pair's completion queue must see no other signalled work: the binder owns it.
 */
public final class WindowBinder implements AutoCloseable {
  /** Invalidations posted and not yet seen complete, at most; well inside the send queue. */
  private static final int UNREAPED_MAX = 8;

  private final QueuePair pair;
  private final CompletionQueue completions;
  private final Arena arena = Arena.ofShared();
  private final MemorySegment request;
  private final MemorySegment badRequest;
  private long calls;
  private int unreaped;
  private boolean closed;

  WindowBinder(QueuePair pair, CompletionQueue completions) {
    this.pair = pair;
    this.completions = completions;
    this.request = arena.allocate(Layout.SEND_WR_SIZE, 8);
    this.badRequest = arena.allocate(ADDRESS);
  }

  /**
   * Grants the peer of this queue pair remote read of {@code length} bytes at {@code address} (inside
   * {@code region}, which was registered with {@code MEMORY_WINDOW_BIND}) through {@code window}, and returns the
   * window's new key. Only this queue pair's peer can use it.
   */
  public synchronized int bind(MemoryWindow window, MemoryRegion region, long address, long length,
      Deadline deadline) {
    if (!region.contains(address, length) || length <= 0) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "a window of " + length + " bytes at " + address
          + " is not inside its region");
    }
    int previous = window.remoteKey();
    int next = (previous & ~0xff) | ((previous + 1) & 0xff);
    request.fill((byte) 0);
    request.set(JAVA_INT, Layout.SEND_WR_OPCODE, Layout.WR_BIND_MW);
    request.set(ADDRESS, Layout.SEND_WR_BIND_MW, window.mw);
    request.set(JAVA_INT, Layout.SEND_WR_BIND_RKEY, next);
    request.set(ADDRESS, Layout.SEND_WR_BIND_MR, region.mr);
    request.set(JAVA_LONG, Layout.SEND_WR_BIND_ADDR, address);
    request.set(JAVA_LONG, Layout.SEND_WR_BIND_LENGTH, length);
    request.set(JAVA_INT, Layout.SEND_WR_BIND_ACCESS, MemoryRegion.Access.REMOTE_READ.flag);
    long id = post("binding a memory window");
    awaitCompletion(id, "binding a memory window", deadline);
    // The provider reads the window's current key from ibv_mw on the next bind: keep it in step with the device.
    window.remoteKey(next);
    window.bound(true);
    return next;
  }

  /**
   * Takes the window's key back: once the device has run the request (on rxe, before this returns; on a NIC,
   * microseconds later and always before a later bind of the window), every read with it fails with a remote
   * access error. Waits only when {@value #UNREAPED_MAX} invalidations are still unconfirmed.
   */
  public synchronized void invalidate(MemoryWindow window, Deadline deadline) {
    if (!window.isBound()) {
      return;
    }
    request.fill((byte) 0);
    request.set(JAVA_INT, Layout.SEND_WR_OPCODE, Layout.WR_LOCAL_INV);
    request.set(JAVA_INT, Layout.SEND_WR_INVALIDATE_RKEY, window.remoteKey());
    post("invalidating a memory window");
    window.bound(false);
    unreaped++;
    reap(completions.poll(), -1, "invalidating a memory window");
    while (unreaped >= UNREAPED_MAX) {
      reap(completions.await(deadline, "invalidating a memory window"), -1, "invalidating a memory window");
    }
  }

  /** Waits until every invalidation posted so far has completed: from then on none of their keys works. */
  public synchronized void awaitInvalidations(Deadline deadline) {
    while (unreaped > 0) {
      reap(completions.await(deadline, "invalidating a memory window"), -1, "invalidating a memory window");
    }
  }

  /** Waits for the completion of request {@code id}, collecting finished invalidations on the way. */
  private void awaitCompletion(long id, String what, Deadline deadline) {
    while (!reap(completions.await(deadline, what), id, what)) {
      // another invalidation's completion came first
    }
  }

  /** Checks {@code n} completions; returns whether request {@code id} was among them. */
  private boolean reap(int n, long id, String what) {
    boolean found = false;
    for (int i = 0; i < n; i++) {
      int opcode = completions.opcode(i);
      completions.check(i, opcode == Layout.WC_LOCAL_INV ? "invalidating a memory window" : what);
      if (completions.workRequestId(i) == id) {
        found = true;
      } else if (opcode == Layout.WC_LOCAL_INV) {
        unreaped--;
      }
    }
    return found;
  }

  private long post(String what) {
    if (closed) {
      throw ThallusException.of(StatusCode.CANCELLED, "the window binder is closed");
    }
    long id = ++calls;
    request.set(JAVA_LONG, Layout.SEND_WR_ID, id);
    request.set(JAVA_INT, Layout.SEND_WR_SEND_FLAGS, Layout.SEND_SIGNALED);
    pair.post(request, badRequest, what);
    return id;
  }

  @Override
  public synchronized void close() {
    if (!closed) {
      closed = true;
      arena.close();
    }
  }
}
