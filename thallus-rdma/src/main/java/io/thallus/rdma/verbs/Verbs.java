package io.thallus.rdma.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.internal.transport.Errno;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.Optional;

/**
 * The libibverbs entry points, bound through the FFM linker the first time the library is asked for. The data-path
 * calls ({@code ibv_post_send}, {@code ibv_poll_cq}, {@code ibv_req_notify_cq}) are inline functions in
 * {@code verbs.h} that call through the provider's function pointers in the context's ops table; those are bound as
 * address-taking handles and called with the pointer read from the table.
 */
final class Verbs {
  private static final Linker LINKER = Linker.nativeLinker();
  static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
  private static final VarHandle ERRNO = CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));

  /**
   * Loading the library and linking are restricted operations the JVM warns about: the holder defers them to the
   * first use, so a machine without RDMA devices never gets that far.
   */
  private static final class Holder {
    static final Optional<Verbs> LIBRARY = load();

    private static Optional<Verbs> load() {
      SymbolLookup library;
      try {
        library = SymbolLookup.libraryLookup("libibverbs.so.1", Arena.global());
      } catch (IllegalArgumentException e) {
        return Optional.empty();
      }
      return Optional.of(new Verbs(library));
    }
  }

  /** libibverbs, bound; empty where it is not installed. */
  static Optional<Verbs> library() {
    return Holder.LIBRARY;
  }

  static Verbs require() {
    return library().orElseThrow(
        () -> ThallusException.of(StatusCode.UNAVAILABLE, "libibverbs is not installed (Debian: libibverbs1)"));
  }

  /** Whether libibverbs is installed at all (Debian: libibverbs1). */
  static boolean isInstalled() {
    return library().isPresent();
  }

  // Control path: errno captured (call state as first argument) for the calls that report failure through it.
  private final MethodHandle ibvGetDeviceList;
  private final MethodHandle ibvFreeDeviceList;
  private final MethodHandle ibvGetDeviceName;
  private final MethodHandle ibvOpenDevice;
  private final MethodHandle ibvCloseDevice;
  private final MethodHandle ibvQueryDevice;
  private final MethodHandle ibvQueryPort;
  private final MethodHandle ibvQueryGid;
  private final MethodHandle ibvAllocPd;
  private final MethodHandle ibvDeallocPd;
  private final MethodHandle ibvRegMr;
  private final MethodHandle ibvDeregMr;
  private final MethodHandle ibvCreateCompChannel;
  private final MethodHandle ibvDestroyCompChannel;
  private final MethodHandle ibvCreateCq;
  private final MethodHandle ibvDestroyCq;
  private final MethodHandle ibvGetCqEvent;
  private final MethodHandle ibvAckCqEvents;
  private final MethodHandle ibvCreateQp;
  private final MethodHandle ibvModifyQp;
  private final MethodHandle ibvDestroyQp;
  private final MethodHandle ibvQueryQp;

  private Verbs(SymbolLookup library) {
    ibvGetDeviceList = bind(library, "ibv_get_device_list", FunctionDescriptor.of(ADDRESS, ADDRESS), true);
    ibvFreeDeviceList = bind(library, "ibv_free_device_list", FunctionDescriptor.ofVoid(ADDRESS), false);
    ibvGetDeviceName = bind(library, "ibv_get_device_name", FunctionDescriptor.of(ADDRESS, ADDRESS), false);
    ibvOpenDevice = bind(library, "ibv_open_device", FunctionDescriptor.of(ADDRESS, ADDRESS), true);
    ibvCloseDevice = bind(library, "ibv_close_device", FunctionDescriptor.of(JAVA_INT, ADDRESS), false);
    ibvQueryDevice = bind(library, "ibv_query_device", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), false);
    ibvQueryPort = bind(library, "ibv_query_port",
        FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS), false);
    ibvQueryGid = bind(library, "ibv_query_gid",
        FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, ADDRESS), false);
    ibvAllocPd = bind(library, "ibv_alloc_pd", FunctionDescriptor.of(ADDRESS, ADDRESS), true);
    ibvDeallocPd = bind(library, "ibv_dealloc_pd", FunctionDescriptor.of(JAVA_INT, ADDRESS), false);
    ibvRegMr = bind(library, "ibv_reg_mr",
        FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT), true);
    ibvDeregMr = bind(library, "ibv_dereg_mr", FunctionDescriptor.of(JAVA_INT, ADDRESS), false);
    ibvCreateCompChannel = bind(library, "ibv_create_comp_channel", FunctionDescriptor.of(ADDRESS, ADDRESS), true);
    ibvDestroyCompChannel = bind(library, "ibv_destroy_comp_channel",
        FunctionDescriptor.of(JAVA_INT, ADDRESS), false);
    ibvCreateCq = bind(library, "ibv_create_cq",
        FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT), true);
    ibvDestroyCq = bind(library, "ibv_destroy_cq", FunctionDescriptor.of(JAVA_INT, ADDRESS), false);
    ibvGetCqEvent = bind(library, "ibv_get_cq_event",
        FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS), true);
    ibvAckCqEvents = bind(library, "ibv_ack_cq_events", FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT), false);
    ibvCreateQp = bind(library, "ibv_create_qp", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS), true);
    ibvModifyQp = bind(library, "ibv_modify_qp",
        FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT), false);
    ibvDestroyQp = bind(library, "ibv_destroy_qp", FunctionDescriptor.of(JAVA_INT, ADDRESS), false);
    ibvQueryQp = bind(library, "ibv_query_qp",
        FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, ADDRESS), false);
  }

  private static MethodHandle bind(SymbolLookup library, String name, FunctionDescriptor descriptor, boolean errno) {
    MemorySegment symbol = library.find(name).orElseThrow(
        () -> new IllegalStateException("libibverbs has no " + name));
    return errno ? LINKER.downcallHandle(symbol, descriptor, Linker.Option.captureCallState("errno"))
        : LINKER.downcallHandle(symbol, descriptor);
  }

  /** What invokeExact may throw, unchecked: the linker's own failures pass as they are. */
  private static RuntimeException unchecked(String call, Throwable e) {
    if (e instanceof Error error) {
      throw error;
    }
    return e instanceof RuntimeException runtime ? runtime
        : new IllegalStateException(call + " failed to run: " + e, e);
  }

  MemorySegment getDeviceList(MemorySegment callState, MemorySegment count) {
    try {
      return (MemorySegment) ibvGetDeviceList.invokeExact(callState, count);
    } catch (Throwable e) {
      throw unchecked("ibv_get_device_list", e);
    }
  }

  void freeDeviceList(MemorySegment list) {
    try {
      ibvFreeDeviceList.invokeExact(list);
    } catch (Throwable e) {
      throw unchecked("ibv_free_device_list", e);
    }
  }

  MemorySegment getDeviceName(MemorySegment device) {
    try {
      return (MemorySegment) ibvGetDeviceName.invokeExact(device);
    } catch (Throwable e) {
      throw unchecked("ibv_get_device_name", e);
    }
  }

  MemorySegment openDevice(MemorySegment callState, MemorySegment device) {
    try {
      return (MemorySegment) ibvOpenDevice.invokeExact(callState, device);
    } catch (Throwable e) {
      throw unchecked("ibv_open_device", e);
    }
  }

  int closeDevice(MemorySegment context) {
    try {
      return (int) ibvCloseDevice.invokeExact(context);
    } catch (Throwable e) {
      throw unchecked("ibv_close_device", e);
    }
  }

  int queryDevice(MemorySegment context, MemorySegment attr) {
    try {
      return (int) ibvQueryDevice.invokeExact(context, attr);
    } catch (Throwable e) {
      throw unchecked("ibv_query_device", e);
    }
  }

  int queryPort(MemorySegment context, int port, MemorySegment attr) {
    try {
      return (int) ibvQueryPort.invokeExact(context, port, attr);
    } catch (Throwable e) {
      throw unchecked("ibv_query_port", e);
    }
  }

  int queryGid(MemorySegment context, int port, int index, MemorySegment gid) {
    try {
      return (int) ibvQueryGid.invokeExact(context, port, index, gid);
    } catch (Throwable e) {
      throw unchecked("ibv_query_gid", e);
    }
  }

  MemorySegment allocPd(MemorySegment callState, MemorySegment context) {
    try {
      return (MemorySegment) ibvAllocPd.invokeExact(callState, context);
    } catch (Throwable e) {
      throw unchecked("ibv_alloc_pd", e);
    }
  }

  int deallocPd(MemorySegment pd) {
    try {
      return (int) ibvDeallocPd.invokeExact(pd);
    } catch (Throwable e) {
      throw unchecked("ibv_dealloc_pd", e);
    }
  }

  MemorySegment regMr(MemorySegment callState, MemorySegment pd, MemorySegment address, long length, int access) {
    try {
      return (MemorySegment) ibvRegMr.invokeExact(callState, pd, address, length, access);
    } catch (Throwable e) {
      throw unchecked("ibv_reg_mr", e);
    }
  }

  int deregMr(MemorySegment mr) {
    try {
      return (int) ibvDeregMr.invokeExact(mr);
    } catch (Throwable e) {
      throw unchecked("ibv_dereg_mr", e);
    }
  }

  MemorySegment createCompChannel(MemorySegment callState, MemorySegment context) {
    try {
      return (MemorySegment) ibvCreateCompChannel.invokeExact(callState, context);
    } catch (Throwable e) {
      throw unchecked("ibv_create_comp_channel", e);
    }
  }

  int destroyCompChannel(MemorySegment channel) {
    try {
      return (int) ibvDestroyCompChannel.invokeExact(channel);
    } catch (Throwable e) {
      throw unchecked("ibv_destroy_comp_channel", e);
    }
  }

  MemorySegment createCq(MemorySegment callState, MemorySegment context, int entries, MemorySegment cqContext,
      MemorySegment channel, int compVector) {
    try {
      return (MemorySegment) ibvCreateCq.invokeExact(callState, context, entries, cqContext, channel, compVector);
    } catch (Throwable e) {
      throw unchecked("ibv_create_cq", e);
    }
  }

  int destroyCq(MemorySegment cq) {
    try {
      return (int) ibvDestroyCq.invokeExact(cq);
    } catch (Throwable e) {
      throw unchecked("ibv_destroy_cq", e);
    }
  }

  int getCqEvent(MemorySegment callState, MemorySegment channel, MemorySegment eventCq, MemorySegment eventContext) {
    try {
      return (int) ibvGetCqEvent.invokeExact(callState, channel, eventCq, eventContext);
    } catch (Throwable e) {
      throw unchecked("ibv_get_cq_event", e);
    }
  }

  void ackCqEvents(MemorySegment cq, int events) {
    try {
      ibvAckCqEvents.invokeExact(cq, events);
    } catch (Throwable e) {
      throw unchecked("ibv_ack_cq_events", e);
    }
  }

  MemorySegment createQp(MemorySegment callState, MemorySegment pd, MemorySegment initAttr) {
    try {
      return (MemorySegment) ibvCreateQp.invokeExact(callState, pd, initAttr);
    } catch (Throwable e) {
      throw unchecked("ibv_create_qp", e);
    }
  }

  int modifyQp(MemorySegment qp, MemorySegment attr, int mask) {
    try {
      return (int) ibvModifyQp.invokeExact(qp, attr, mask);
    } catch (Throwable e) {
      throw unchecked("ibv_modify_qp", e);
    }
  }

  int queryQp(MemorySegment qp, MemorySegment attr, int mask, MemorySegment initAttr) {
    try {
      return (int) ibvQueryQp.invokeExact(qp, attr, mask, initAttr);
    } catch (Throwable e) {
      throw unchecked("ibv_query_qp", e);
    }
  }

  int destroyQp(MemorySegment qp) {
    try {
      return (int) ibvDestroyQp.invokeExact(qp);
    } catch (Throwable e) {
      throw unchecked("ibv_destroy_qp", e);
    }
  }

  // Data path: provider functions found in the ops table; the first argument is the function's address.
  static final MethodHandle POST_SEND = LINKER.downcallHandle(
      FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
  /** {@code post_recv(qp, wr, bad_wr)}: the same shape as {@code post_send}. */
  static final MethodHandle POST_RECV = LINKER.downcallHandle(
      FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
  static final MethodHandle POLL_CQ = LINKER.downcallHandle(
      FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS));
  static final MethodHandle REQ_NOTIFY_CQ = LINKER.downcallHandle(
      FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
  // ibv_alloc_mw / ibv_dealloc_mw are inline in verbs.h too; the provider reports failure through errno.
  static final MethodHandle ALLOC_MW = LINKER.downcallHandle(
      FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT), Linker.Option.captureCallState("errno"));
  static final MethodHandle DEALLOC_MW = LINKER.downcallHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS));

  /** libc: waiting on a completion channel's file descriptor with a timeout; checking where a pointer points. */
  private static final class Libc {
    static final MethodHandle POLL = LINKER.downcallHandle(LINKER.defaultLookup().find("poll").orElseThrow(),
        FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT), Linker.Option.captureCallState("errno"));
    // fcntl is variadic: its third argument is passed as a variadic int.
    static final MethodHandle FCNTL = LINKER.downcallHandle(LINKER.defaultLookup().find("fcntl").orElseThrow(),
        FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT), Linker.Option.firstVariadicArg(2));
    static final MethodHandle DLADDR = LINKER.downcallHandle(LINKER.defaultLookup().find("dladdr")
        .orElseGet(() -> SymbolLookup.libraryLookup("libc.so.6", Arena.global()).find("dladdr").orElseThrow()),
        FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
  }

  static int poll(MemorySegment callState, MemorySegment fds, long count, int timeoutMillis) {
    try {
      return (int) Libc.POLL.invokeExact(callState, fds, count, timeoutMillis);
    } catch (Throwable e) {
      throw unchecked("poll", e);
    }
  }

  static int fcntl(int fd, int command, int argument) {
    try {
      return (int) Libc.FCNTL.invokeExact(fd, command, argument);
    } catch (Throwable e) {
      throw unchecked("fcntl", e);
    }
  }

  static int dladdr(MemorySegment address, MemorySegment info) {
    try {
      return (int) Libc.DLADDR.invokeExact(address, info);
    } catch (Throwable e) {
      throw unchecked("dladdr", e);
    }
  }

  static final short POLLIN = 1;
  static final long POLLFD_SIZE = 8;
  static final long POLLFD_EVENTS = 4;

  static int errno(MemorySegment callState) {
    return (int) ERRNO.get(callState, 0L);
  }

  /** A failed control-path call, with errno's name where there is one. */
  static ThallusException failure(String call, int errno) {
    return ThallusException.of(errno == 1 || errno == 13 ? StatusCode.PERMISSION_DENIED
        : errno == 12 ? StatusCode.RESOURCE_EXHAUSTED : StatusCode.UNAVAILABLE,
        call + " failed: " + errnoName(errno));
  }

  private static String errnoName(int errno) {
    // ENOMEM from verbs almost always means pinned memory hit RLIMIT_MEMLOCK.
    return errno == 12 ? Errno.name(errno) + " (is the locked-memory limit, ulimit -l, too small?)"
        : Errno.name(errno);
  }
}
