package io.thallus.internal.transport.cma;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.Optional;

/**
 * {@code process_vm_readv(2)} through the Java FFM API: no JNI, no native code of ours. A reader keeps its
 * {@code iovec} arrays and errno slot and fills them in place for every call, so nothing is allocated per read;
 * it is used by one thread at a time.
 */
final class ProcessVm implements AutoCloseable {
  /** The most iovecs one call takes (Linux's IOV_MAX). */
  static final int MAX_IOVECS = 1024;
  private static final long IOVEC_BYTES = 16;
  private static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
  private static final VarHandle ERRNO =
      CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));

  /**
   * The binding, made the first time a session reads: linking a native call is a restricted operation, and the JVM
   * warns about it unless native access is enabled, so it waits until cma is actually chosen.
   */
  private static final class Binding {
    static final Optional<MethodHandle> READV = Linker.nativeLinker().defaultLookup()
        .find("process_vm_readv")
        .map(symbol -> Linker.nativeLinker().downcallHandle(symbol,
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG, JAVA_LONG),
            Linker.Option.captureCallState("errno")));
  }

  /** The typed call; the handle takes the errno slot first because it was bound capturing errno. */
  private static long processVmReadv(MemorySegment callState, int pid, MemorySegment localIov, long localCount,
      MemorySegment remoteIov, long remoteCount, long flags) {
    try {
      return (long) Binding.READV.orElseThrow().invokeExact(callState, pid, localIov, localCount, remoteIov,
          remoteCount, flags);
    } catch (RuntimeException | Error e) {
      throw e;
    } catch (Throwable e) {
      throw new IllegalStateException("process_vm_readv could not be called: " + e, e);
    }
  }

  // Shared, not confined: made on one thread, used by whichever thread reads (never two at once).
  private final Arena arena = Arena.ofShared();
  private final MemorySegment local = arena.allocate(IOVEC_BYTES * MAX_IOVECS, 8);
  private final MemorySegment remote = arena.allocate(IOVEC_BYTES * MAX_IOVECS, 8);
  private final MemorySegment callState = arena.allocate(CALL_STATE);
  private int count;

  /** Whether this platform has the call at all (Linux does; others do not), asked without linking it. */
  static boolean isSupported() {
    return "Linux".equals(System.getProperty("os.name"));
  }

  ProcessVm() {
    if (Binding.READV.isEmpty()) {
      arena.close();
      throw ThallusException.of(StatusCode.UNAVAILABLE, "this C library has no process_vm_readv");
    }
  }

  /** Starts a new list of (local destination, remote source) pairs. */
  void clear() {
    count = 0;
  }

  boolean isFull() {
    return count == MAX_IOVECS;
  }

  /** Adds one pair: {@code length} bytes from {@code remoteAddress} to {@code localAddress}. */
  void add(long localAddress, long remoteAddress, long length) {
    long offset = count * IOVEC_BYTES;
    local.set(JAVA_LONG, offset, localAddress);
    local.set(JAVA_LONG, offset + 8, length);
    remote.set(JAVA_LONG, offset, remoteAddress);
    remote.set(JAVA_LONG, offset + 8, length);
    count++;
  }

  /** Reads every pair added since {@link #clear()}; returns the bytes read, or minus errno. */
  long read(long pid) {
    long result = processVmReadv(callState, (int) pid, local, count, remote, count, 0L);
    return result >= 0 ? result : -(int) ERRNO.get(callState, 0L);
  }

  @Override
  public void close() {
    arena.close();
  }
}
