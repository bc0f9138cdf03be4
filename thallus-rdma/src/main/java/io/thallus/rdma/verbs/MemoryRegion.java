package io.thallus.rdma.verbs;

import java.lang.foreign.MemorySegment;

/**
 * Registered memory ({@code ibv_mr}): local key for this side's work requests, remote key for peers. After
 * {@link #close()} (deregistration) the remote key is dead: a peer's read fails with a remote access error.
 */
public final class MemoryRegion implements AutoCloseable {
  /** What registered memory may be used for. */
  public enum Access {
    LOCAL_WRITE(Layout.ACCESS_LOCAL_WRITE),
    /** Peers may write into it (RDMA WRITE, with or without immediate); needs LOCAL_WRITE too, as verbs demands. */
    REMOTE_WRITE(Layout.ACCESS_REMOTE_WRITE),
    REMOTE_READ(Layout.ACCESS_REMOTE_READ),
    /** Memory windows may be bound to it: peers then reach it only through a window's key, never the region's. */
    MEMORY_WINDOW_BIND(Layout.ACCESS_MW_BIND);

    final int flag;

    Access(int flag) {
      this.flag = flag;
    }
  }

  final MemorySegment mr;
  private final long address;
  private final long length;
  private final int lkey;
  private final int rkey;
  private boolean closed;

  MemoryRegion(MemorySegment mr, long address, long length, int lkey, int rkey) {
    this.mr = mr;
    this.address = address;
    this.length = length;
    this.lkey = lkey;
    this.rkey = rkey;
  }

  public long address() {
    return address;
  }

  public long length() {
    return length;
  }

  public int localKey() {
    return lkey;
  }

  public int remoteKey() {
    return rkey;
  }

  public boolean contains(long start, long bytes) {
    return start >= address && bytes >= 0 && start + bytes <= address + length;
  }

  @Override
  public synchronized void close() {
    if (!closed) {
      closed = true;
      int rc = Verbs.require().deregMr(mr);
      if (rc != 0) {
        throw Verbs.failure("ibv_dereg_mr", rc);
      }
    }
  }
}
