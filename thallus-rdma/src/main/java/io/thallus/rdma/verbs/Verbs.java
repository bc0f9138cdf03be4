package io.thallus.rdma.verbs;

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
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

/**
 * The libibverbs entry points, bound once through the FFM linker. The data-path calls ({@code ibv_post_send},
 * {@code ibv_poll_cq}, {@code ibv_req_notify_cq}) are inline functions in {@code verbs.h} that call through the
 * provider's function pointers in the context's ops table; those are bound as address-taking handles and called
 * with the pointer read from the table.
 */
final class Verbs {
  private Verbs() {}

  private static final Linker LINKER = Linker.nativeLinker();
  static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
  private static final VarHandle ERRNO = CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
  private static final SymbolLookup IBVERBS = load();

  private static SymbolLookup load() {
    try {
      return SymbolLookup.libraryLookup("libibverbs.so.1", Arena.global());
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  /** Whether libibverbs is installed at all (Debian: libibverbs1). */
  static boolean isInstalled() {
    return IBVERBS != null;
  }

  private static MethodHandle bind(String name, FunctionDescriptor descriptor, boolean errno) {
    if (IBVERBS == null) {
      return null;
    }
    MemorySegment symbol = IBVERBS.find(name).orElseThrow(
        () -> new IllegalStateException("libibverbs has no " + name));
    return errno ? LINKER.downcallHandle(symbol, descriptor, Linker.Option.captureCallState("errno"))
        : LINKER.downcallHandle(symbol, descriptor);
  }

  // Control path: errno captured for the calls that report failure through it.
  static final MethodHandle GET_DEVICE_LIST = bind("ibv_get_device_list", FunctionDescriptor.of(ADDRESS, ADDRESS), true);
  static final MethodHandle FREE_DEVICE_LIST = bind("ibv_free_device_list", FunctionDescriptor.ofVoid(ADDRESS), false);
  static final MethodHandle GET_DEVICE_NAME = bind("ibv_get_device_name", FunctionDescriptor.of(ADDRESS, ADDRESS), false);
  static final MethodHandle OPEN_DEVICE = bind("ibv_open_device", FunctionDescriptor.of(ADDRESS, ADDRESS), true);
  static final MethodHandle CLOSE_DEVICE = bind("ibv_close_device", FunctionDescriptor.of(JAVA_INT, ADDRESS), false);
  static final MethodHandle QUERY_DEVICE = bind("ibv_query_device", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), false);
  static final MethodHandle QUERY_PORT = bind("ibv_query_port",
      FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS), false);
  static final MethodHandle QUERY_GID = bind("ibv_query_gid",
      FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, ADDRESS), false);
  static final MethodHandle ALLOC_PD = bind("ibv_alloc_pd", FunctionDescriptor.of(ADDRESS, ADDRESS), true);
  static final MethodHandle DEALLOC_PD = bind("ibv_dealloc_pd", FunctionDescriptor.of(JAVA_INT, ADDRESS), false);
  static final MethodHandle REG_MR = bind("ibv_reg_mr",
      FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT), true);
  static final MethodHandle DEREG_MR = bind("ibv_dereg_mr", FunctionDescriptor.of(JAVA_INT, ADDRESS), false);
  static final MethodHandle CREATE_COMP_CHANNEL = bind("ibv_create_comp_channel",
      FunctionDescriptor.of(ADDRESS, ADDRESS), true);
  static final MethodHandle DESTROY_COMP_CHANNEL = bind("ibv_destroy_comp_channel",
      FunctionDescriptor.of(JAVA_INT, ADDRESS), false);
  static final MethodHandle CREATE_CQ = bind("ibv_create_cq",
      FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT), true);
  static final MethodHandle DESTROY_CQ = bind("ibv_destroy_cq", FunctionDescriptor.of(JAVA_INT, ADDRESS), false);
  static final MethodHandle GET_CQ_EVENT = bind("ibv_get_cq_event",
      FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS), true);
  static final MethodHandle ACK_CQ_EVENTS = bind("ibv_ack_cq_events",
      FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT), false);
  static final MethodHandle CREATE_QP = bind("ibv_create_qp", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS), true);
  static final MethodHandle MODIFY_QP = bind("ibv_modify_qp",
      FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT), false);
  static final MethodHandle DESTROY_QP = bind("ibv_destroy_qp", FunctionDescriptor.of(JAVA_INT, ADDRESS), false);

  // Data path: provider functions found in the ops table; the first argument is the function's address.
  static final MethodHandle POST_SEND = LINKER.downcallHandle(
      FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
  static final MethodHandle POLL_CQ = LINKER.downcallHandle(
      FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS));
  static final MethodHandle REQ_NOTIFY_CQ = LINKER.downcallHandle(
      FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
  // ibv_alloc_mw / ibv_dealloc_mw are inline in verbs.h too; the provider reports failure through errno.
  static final MethodHandle ALLOC_MW = LINKER.downcallHandle(
      FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT), Linker.Option.captureCallState("errno"));
  static final MethodHandle DEALLOC_MW = LINKER.downcallHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS));

  // libc: waiting on a completion channel's file descriptor with a timeout; checking where a pointer points.
  static final MethodHandle POLL = LINKER.downcallHandle(LINKER.defaultLookup().find("poll").orElseThrow(),
      FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT), Linker.Option.captureCallState("errno"));
  static final MethodHandle FCNTL = LINKER.downcallHandle(LINKER.defaultLookup().find("fcntl").orElseThrow(),
      FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT), Linker.Option.firstVariadicArg(2));
  static final MethodHandle DLADDR = LINKER.downcallHandle(LINKER.defaultLookup().find("dladdr")
      .orElseGet(() -> SymbolLookup.libraryLookup("libc.so.6", Arena.global()).find("dladdr").orElseThrow()),
      FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));

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

  static String errnoName(int errno) {
    return switch (errno) {
      case 0 -> "no error reported";
      case 1 -> "EPERM (not permitted)";
      case 2 -> "ENOENT";
      case 11 -> "EAGAIN";
      case 12 -> "ENOMEM (is the locked-memory limit, ulimit -l, too small?)";
      case 13 -> "EACCES";
      case 14 -> "EFAULT";
      case 16 -> "EBUSY";
      case 19 -> "ENODEV";
      case 22 -> "EINVAL";
      case 95 -> "EOPNOTSUPP";
      case 110 -> "ETIMEDOUT";
      default -> "errno " + errno;
    };
  }

  /** Calls a handle whose failures are already checked by the caller; wraps what the linker throws. */
  static Object call(MethodHandle handle, Object... args) {
    try {
      return handle.invokeWithArguments(args);
    } catch (Throwable e) {
      throw new IllegalStateException("native call failed to run: " + e, e);
    }
  }
}
