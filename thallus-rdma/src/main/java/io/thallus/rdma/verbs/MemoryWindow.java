package io.thallus.rdma.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A type 2B memory window ({@code ibv_mw}): a remote key for one range of a registered region, granted to one queue
 * pair by {@link WindowBinder#bind} and taken back by {@link WindowBinder#invalidate}. Each bind gives the window a
 * new key, so a key handed out for an earlier range never works again, even when the window is bound anew.
 */
public final class MemoryWindow implements AutoCloseable {
  final ProtectionDomain domain;
  final MemorySegment mw;
  private boolean bound;
  private boolean closed;

  private MemoryWindow(ProtectionDomain domain, MemorySegment mw) {
    this.domain = domain;
    this.mw = mw;
  }

  static MemoryWindow allocate(ProtectionDomain domain) {
    RdmaDevice device = domain.device;
    if (device.allocMw.equals(MemorySegment.NULL)) {
      throw ThallusException.of(StatusCode.UNIMPLEMENTED, device.name() + " has no memory windows");
    }
    try (Arena scratch = Arena.ofConfined()) {
      MemorySegment state = scratch.allocate(Verbs.CALL_STATE);
      MemorySegment mw;
      try {
        mw = (MemorySegment) Verbs.ALLOC_MW.invokeExact(device.allocMw, state, domain.pd, Layout.MW_TYPE_2);
      } catch (Throwable e) {
        throw new IllegalStateException("ibv_alloc_mw failed to run: " + e, e);
      }
      if (mw.equals(MemorySegment.NULL)) {
        throw Verbs.failure("ibv_alloc_mw(type 2)", Verbs.errno(state));
      }
      mw = mw.reinterpret(Layout.MW_TYPE + 4);
      if (mw.get(ADDRESS, Layout.MW_PD).address() != domain.pd.address()
          || mw.get(JAVA_INT, Layout.MW_TYPE) != Layout.MW_TYPE_2) {
        throw RdmaDevice.layoutMismatch("ibv_mw");
      }
      return new MemoryWindow(domain, mw);
    }
  }

  /** The window's current key: grants access only while the window is bound. */
  public int remoteKey() {
    return mw.get(JAVA_INT, Layout.MW_RKEY);
  }

  void remoteKey(int key) {
    mw.set(JAVA_INT, Layout.MW_RKEY, key);
  }

  public synchronized boolean isBound() {
    return bound;
  }

  synchronized void bound(boolean value) {
    bound = value;
  }

  /** Frees the window; a bound window's key dies with it. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    int rc;
    try {
      rc = (int) Verbs.DEALLOC_MW.invokeExact(domain.device.deallocMw, mw);
    } catch (Throwable e) {
      throw new IllegalStateException("ibv_dealloc_mw failed to run: " + e, e);
    }
    if (rc != 0) {
      throw Verbs.failure("ibv_dealloc_mw", rc);
    }
  }
}
