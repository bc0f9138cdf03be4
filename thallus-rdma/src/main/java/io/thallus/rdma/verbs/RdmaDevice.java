package io.thallus.rdma.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * An opened RDMA device ({@code ibv_context}): the root of protection domains and completion queues. Opening checks
 * the binding's struct layout against the live library and refuses to run on a mismatch.
 */
public final class RdmaDevice implements AutoCloseable {
  /**
   * What the device can do, from {@code ibv_query_device}. {@code memoryWindows}: type 2B windows, bound and
   * invalidated by work requests on one queue pair (what {@link WindowBinder} needs).
   */
  public record Attributes(long maxMemoryRegionSize, int maxQueuePairRequests, int maxScatterGather,
      int maxCompletionQueueEntries, int maxReadsInFlightAsTarget, int maxReadsInFlightAsInitiator, int ports,
      boolean memoryWindows) {}

  /** A port's state, from {@code ibv_query_port}. */
  public record Port(int state, int activeMtu, int lid, int linkLayer) {
    public boolean isActive() {
      return state == Layout.PORT_ACTIVE;
    }

    public boolean isEthernet() {
      return linkLayer == Layout.LINK_LAYER_ETHERNET;
    }
  }

  private final String name;
  final MemorySegment context;
  final MemorySegment pollCq;
  final MemorySegment reqNotifyCq;
  final MemorySegment postSend;
  final MemorySegment postRecv;
  final MemorySegment allocMw;
  final MemorySegment deallocMw;
  private boolean closed;

  private RdmaDevice(String name, MemorySegment context) {
    this.name = name;
    this.context = context.reinterpret(512);
    this.pollCq = this.context.get(ADDRESS, Layout.OPS_POLL_CQ);
    this.reqNotifyCq = this.context.get(ADDRESS, Layout.OPS_REQ_NOTIFY_CQ);
    this.postSend = this.context.get(ADDRESS, Layout.OPS_POST_SEND);
    this.postRecv = this.context.get(ADDRESS, Layout.OPS_POST_RECV);
    this.allocMw = this.context.get(ADDRESS, Layout.OPS_ALLOC_MW);
    this.deallocMw = this.context.get(ADDRESS, Layout.OPS_DEALLOC_MW);
  }

  /** Whether libibverbs is installed here (it says nothing of devices). */
  public static boolean isSupported() {
    return anyDevicePresent() && Verbs.isInstalled();
  }

  /**
   * Whether the kernel lists any RDMA device ({@code /sys/class/infiniband}). Asked first, and without native code:
   * on a machine with no device, the verbs library is never loaded, so an application that merely has the rdma
   * transport on its class path gets no native-access warning.
   */
  static boolean anyDevicePresent() {
    try (java.util.stream.Stream<java.nio.file.Path> devices =
        java.nio.file.Files.list(java.nio.file.Path.of("/sys/class/infiniband"))) {
      return devices.findAny().isPresent();
    } catch (java.io.IOException | RuntimeException e) {
      return false;
    }
  }

  /** The names of the RDMA devices present, e.g. {@code [rxe0]}; empty without libibverbs or devices. */
  public static List<String> deviceNames() {
    if (!isSupported()) {
      return List.of();
    }
    Verbs verbs = Verbs.require();
    try (Arena scratch = Arena.ofConfined()) {
      MemorySegment count = scratch.allocate(JAVA_INT);
      MemorySegment state = scratch.allocate(Verbs.CALL_STATE);
      MemorySegment list = verbs.getDeviceList(state, count);
      if (list.equals(MemorySegment.NULL)) {
        return List.of();
      }
      try {
        int n = count.get(JAVA_INT, 0);
        MemorySegment devices = list.reinterpret(8L * n);
        List<String> names = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
          MemorySegment device = devices.getAtIndex(ADDRESS, i);
          MemorySegment cName = verbs.getDeviceName(device);
          names.add(cName.reinterpret(64).getString(0));
        }
        return names;
      } finally {
        verbs.freeDeviceList(list);
      }
    }
  }

  /** Opens a device by name (as {@code ibv_devices} lists it). */
  public static RdmaDevice open(String name) {
    Verbs verbs = Verbs.require();
    try (Arena scratch = Arena.ofConfined()) {
      MemorySegment count = scratch.allocate(JAVA_INT);
      MemorySegment state = scratch.allocate(Verbs.CALL_STATE);
      MemorySegment list = verbs.getDeviceList(state, count);
      if (list.equals(MemorySegment.NULL)) {
        throw Verbs.failure("ibv_get_device_list", Verbs.errno(state));
      }
      try {
        int n = count.get(JAVA_INT, 0);
        MemorySegment devices = list.reinterpret(8L * n);
        List<String> seen = new ArrayList<>();
        for (int i = 0; i < n; i++) {
          MemorySegment device = devices.getAtIndex(ADDRESS, i);
          String deviceName = verbs.getDeviceName(device).reinterpret(64).getString(0);
          seen.add(deviceName);
          if (deviceName.equals(name)) {
            MemorySegment context = verbs.openDevice(state, device);
            if (context.equals(MemorySegment.NULL)) {
              throw Verbs.failure("ibv_open_device(" + name + ")", Verbs.errno(state));
            }
            RdmaDevice opened = new RdmaDevice(name, context);
            try {
              opened.checkLayout(device);
            } catch (RuntimeException e) {
              opened.close();
              throw e;
            }
            return opened;
          }
        }
        throw ThallusException.of(StatusCode.NOT_FOUND, "no RDMA device " + name + "; present: " + seen);
      } finally {
        verbs.freeDeviceList(list);
      }
    }
  }

  /**
   * The context must point back at the device it was opened from, and the ops table must hold provider functions
   * (code in a loaded shared object): otherwise this binding's offsets do not match the installed rdma-core.
   */
  private void checkLayout(MemorySegment device) {
    MemorySegment back = context.get(ADDRESS, Layout.CONTEXT_DEVICE);
    if (back.address() != device.address()) {
      throw layoutMismatch("ibv_context.device");
    }
    for (MemorySegment function : List.of(pollCq, reqNotifyCq, postSend, postRecv)) {
      if (function.equals(MemorySegment.NULL) || !isCode(function)) {
        throw layoutMismatch("ibv_context.ops");
      }
    }
    // Providers without memory windows leave these empty; where present they must be code.
    for (MemorySegment function : List.of(allocMw, deallocMw)) {
      if (!function.equals(MemorySegment.NULL) && !isCode(function)) {
        throw layoutMismatch("ibv_context.ops (memory windows)");
      }
    }
  }

  private static boolean isCode(MemorySegment function) {
    try (Arena scratch = Arena.ofConfined()) {
      MemorySegment info = scratch.allocate(32);
      int found = Verbs.dladdr(function, info);
      return found != 0 && !info.get(ADDRESS, 0).equals(MemorySegment.NULL);
    }
  }

  static ThallusException layoutMismatch(String where) {
    return ThallusException.of(StatusCode.UNIMPLEMENTED, "the installed rdma-core does not match this binding's"
        + " struct layout at " + where + " (built for rdma-core's IBVERBS_1.1 ABI on x86-64); refusing to run");
  }

  public String name() {
    return name;
  }

  public Attributes attributes() {
    try (Arena scratch = Arena.ofConfined()) {
      MemorySegment attr = scratch.allocate(Layout.DEVICE_ATTR_SIZE, 8);
      int rc = Verbs.require().queryDevice(context, attr);
      if (rc != 0) {
        throw Verbs.failure("ibv_query_device", rc);
      }
      return new Attributes(attr.get(JAVA_LONG, Layout.DEVICE_ATTR_MAX_MR_SIZE),
          attr.get(JAVA_INT, Layout.DEVICE_ATTR_MAX_QP_WR), attr.get(JAVA_INT, Layout.DEVICE_ATTR_MAX_SGE),
          attr.get(JAVA_INT, Layout.DEVICE_ATTR_MAX_CQE), attr.get(JAVA_INT, Layout.DEVICE_ATTR_MAX_QP_RD_ATOM),
          attr.get(JAVA_INT, Layout.DEVICE_ATTR_MAX_QP_INIT_RD_ATOM),
          Byte.toUnsignedInt(attr.get(JAVA_BYTE, Layout.DEVICE_ATTR_PHYS_PORT_CNT)),
          (attr.get(JAVA_INT, Layout.DEVICE_ATTR_CAP_FLAGS) & Layout.DEVICE_MEM_WINDOW_TYPE_2B) != 0
              && attr.get(JAVA_INT, Layout.DEVICE_ATTR_MAX_MW) > 0
              && !allocMw.equals(MemorySegment.NULL) && !deallocMw.equals(MemorySegment.NULL));
    }
  }

  public Port port(int number) {
    try (Arena scratch = Arena.ofConfined()) {
      MemorySegment attr = scratch.allocate(Layout.PORT_ATTR_SIZE + 64, 8);
      int rc = Verbs.require().queryPort(context, number, attr);
      if (rc != 0) {
        throw Verbs.failure("ibv_query_port(" + number + ")", rc);
      }
      return new Port(attr.get(JAVA_INT, Layout.PORT_ATTR_STATE), attr.get(JAVA_INT, Layout.PORT_ATTR_ACTIVE_MTU),
          Short.toUnsignedInt(attr.get(JAVA_SHORT, Layout.PORT_ATTR_LID)),
          Byte.toUnsignedInt(attr.get(JAVA_BYTE, Layout.PORT_ATTR_LINK_LAYER)));
    }
  }

  /** System property that fixes the GID index (operators with a GID table this choice gets wrong). */
  public static final String GID_INDEX_PROPERTY = "thallus.rdma.gidIndex";

  /**
   * The GID index to connect with on {@code port}: the {@value #GID_INDEX_PROPERTY} property if set; 0 on an
   * InfiniBand link (routing is by LID there); on RoCE, the first entry the kernel types "RoCE v2" whose GID is an
   * IPv4-mapped address (routable, what rxe and real NICs list for an interface's IPv4 address), else the first
   * "RoCE v2" entry, else 1. The types come from {@code /sys/class/infiniband/DEV/ports/PORT/gid_attrs/types}.
   */
  public int roceGidIndex(int port) {
    String fixed = System.getProperty(GID_INDEX_PROPERTY);
    if (fixed != null) {
      try {
        return Integer.parseInt(fixed.strip());
      } catch (NumberFormatException e) {
        throw ThallusException.of(StatusCode.INVALID_ARGUMENT, GID_INDEX_PROPERTY + " must be a number, not "
            + fixed);
      }
    }
    if (!port(port).isEthernet()) {
      return 0;
    }
    java.nio.file.Path types = java.nio.file.Path.of("/sys/class/infiniband", name, "ports", Integer.toString(port),
        "gid_attrs", "types");
    int firstV2 = -1;
    for (int index = 0; index < 256; index++) {
      String type;
      try {
        type = java.nio.file.Files.readString(types.resolve(Integer.toString(index))).strip();
      } catch (java.io.IOException e) {
        // No such entry (the table ends), or an entry the kernel leaves unset: EINVAL on read.
        if (!java.nio.file.Files.exists(types.resolve(Integer.toString(index)))) {
          break;
        }
        continue;
      }
      if (!type.equalsIgnoreCase("RoCE v2")) {
        continue;
      }
      byte[] gid = gid(port, index);
      if (isIpv4Mapped(gid)) {
        return index;
      }
      if (firstV2 < 0 && !isZero(gid)) {
        firstV2 = index;
      }
    }
    return firstV2 >= 0 ? firstV2 : 1;
  }

  private static boolean isIpv4Mapped(byte[] gid) {
    for (int i = 0; i < 10; i++) {
      if (gid[i] != 0) {
        return false;
      }
    }
    return gid[10] == (byte) 0xff && gid[11] == (byte) 0xff;
  }

  private static boolean isZero(byte[] gid) {
    for (byte b : gid) {
      if (b != 0) {
        return false;
      }
    }
    return true;
  }

  /** The 16-byte GID at {@code index} of {@code port} (on RoCE v2, index 1 is the IPv4-mapped one). */
  public byte[] gid(int port, int index) {
    try (Arena scratch = Arena.ofConfined()) {
      MemorySegment gid = scratch.allocate(16, 8);
      int rc = Verbs.require().queryGid(context, port, index, gid);
      if (rc != 0) {
        throw Verbs.failure("ibv_query_gid(" + port + ", " + index + ")", rc);
      }
      return gid.toArray(JAVA_BYTE);
    }
  }

  public ProtectionDomain allocateProtectionDomain() {
    return ProtectionDomain.allocate(this);
  }

  /** A completion queue of {@code entries} with its own completion channel, for event-driven waits. */
  public CompletionQueue createCompletionQueue(int entries) {
    return CompletionQueue.create(this, entries);
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    Verbs.require().closeDevice(context);
  }
}
