package io.thallus.rdma.verbs;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Set;

/** A protection domain ({@code ibv_pd}): memory regions and queue pairs that may work together. */
public final class ProtectionDomain implements AutoCloseable {
  final RdmaDevice device;
  final MemorySegment pd;
  private boolean closed;

  private ProtectionDomain(RdmaDevice device, MemorySegment pd) {
    this.device = device;
    this.pd = pd;
  }

  static ProtectionDomain allocate(RdmaDevice device) {
    try (Arena scratch = Arena.ofConfined()) {
      MemorySegment state = scratch.allocate(Verbs.CALL_STATE);
      MemorySegment pd = Verbs.require().allocPd(state, device.context);
      if (pd.equals(MemorySegment.NULL)) {
        throw Verbs.failure("ibv_alloc_pd", Verbs.errno(state));
      }
      return new ProtectionDomain(device, pd);
    }
  }

  /** The device this domain belongs to: its queue pairs' completion queues are created there. */
  public RdmaDevice device() {
    return device;
  }

  /**
   * Registers {@code length} bytes at {@code address} for the given uses: {@code REMOTE_READ} for memory peers pull
   * from (never writable by them), {@code LOCAL_WRITE} for receive buffers. Registration pins pages and is slow:
   * register large blocks once and reuse them.
   */
  public MemoryRegion register(long address, long length, Set<MemoryRegion.Access> access) {
    int flags = 0;
    for (MemoryRegion.Access a : access) {
      flags |= a.flag;
    }
    try (Arena scratch = Arena.ofConfined()) {
      MemorySegment state = scratch.allocate(Verbs.CALL_STATE);
      MemorySegment mr = Verbs.require().regMr(state, pd, MemorySegment.ofAddress(address), length,
          flags);
      if (mr.equals(MemorySegment.NULL)) {
        throw Verbs.failure("ibv_reg_mr(" + length + " bytes)", Verbs.errno(state));
      }
      MemorySegment view = mr.reinterpret(Layout.MR_RKEY + 4);
      if (view.get(JAVA_LONG, Layout.MR_ADDR) != address || view.get(JAVA_LONG, Layout.MR_LENGTH) != length) {
        Verbs.require().deregMr(mr);
        throw RdmaDevice.layoutMismatch("ibv_mr");
      }
      return new MemoryRegion(view, address, length, view.get(JAVA_INT, Layout.MR_LKEY),
          view.get(JAVA_INT, Layout.MR_RKEY));
    }
  }

  public MemoryRegion register(MemorySegment segment, Set<MemoryRegion.Access> access) {
    return register(segment.address(), segment.byteSize(), access);
  }

  /** A type 2B memory window of this domain, unbound: its key grants nothing until a {@link WindowBinder} binds it. */
  public MemoryWindow allocateMemoryWindow() {
    return MemoryWindow.allocate(this);
  }

  /** A reliable-connected queue pair whose sends and receives complete on {@code completions}. */
  public QueuePair createQueuePair(CompletionQueue completions, QueuePair.Capacity capacity) {
    return QueuePair.create(this, completions, capacity);
  }

  @Override
  public synchronized void close() {
    if (!closed) {
      closed = true;
      Verbs.require().deallocPd(pd);
    }
  }
}
