package io.thallus.rdma.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Set;

/**
 * A reliable-connected queue pair. Two peers exchange {@link Endpoint}s over any channel (Thallus uses its control
 * connection) and each calls {@link #connect}; then one side's {@link ReadChain}s read the other's registered memory.
 */
public final class QueuePair implements AutoCloseable {
  /**
   * How many requests the send queue holds, how many buffers one request may scatter into, and how many receives may
   * be posted at once (one each for a reader, which receives nothing; one per message a peer may send or write with
   * an immediate value ahead of this side's reposting, for {@link SendChain}'s two-sided and notifying verbs).
   */
  public record Capacity(int sendRequests, int scatterGather, int receiveRequests) {
    public Capacity {
      if (sendRequests < 1 || scatterGather < 1 || receiveRequests < 1) {
        throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "a queue pair holds at least one request of each "
            + "kind and one buffer per request: " + sendRequests + " sends, " + scatterGather + " buffers, "
            + receiveRequests + " receives");
      }
    }

    /** A queue pair that only reads and binds: one receive slot, which it never uses. */
    public Capacity(int sendRequests, int scatterGather) {
      this(sendRequests, scatterGather, 1);
    }
  }

  /** What a peer needs to connect to this queue pair. */
  public record Endpoint(int queuePairNumber, int packetSequence, byte[] gid, int lid) {
    public Endpoint {
      gid = gid.clone();
    }

    /** {@code qpn:psn:lid:gid-hex}, for the control channel. */
    public String encode() {
      return queuePairNumber + ":" + packetSequence + ":" + lid + ":" + java.util.HexFormat.of().formatHex(gid);
    }

    public static Endpoint decode(String text) {
      String[] parts = text.split(":");
      if (parts.length != 4) {
        throw ThallusException.of(StatusCode.PROTOCOL_ERROR, "not an RDMA endpoint: " + text);
      }
      return new Endpoint(Integer.parseInt(parts[0]), Integer.parseInt(parts[1]),
          java.util.HexFormat.of().parseHex(parts[3]), Integer.parseInt(parts[2]));
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Endpoint e && e.queuePairNumber == queuePairNumber && e.packetSequence == packetSequence
          && e.lid == lid && Arrays.equals(e.gid, gid);
    }

    @Override
    public int hashCode() {
      return queuePairNumber * 31 + packetSequence;
    }
  }

  /**
   * Connection settings: the port and GID index to use, the path MTU (verbs code, see {@link Mtu}), how many reads
   * may be outstanding in each direction (bounded by the device's {@code max_qp_rd_atom}), and the ack timeout
   * (4.096 us * 2^timeout) and retries that decide how soon a vanished peer is noticed.
   */
  public record ConnectOptions(int port, int gidIndex, int mtu, int readsInFlight, int timeout, int retries) {
    /**
     * What {@code device} reports for port 1: its GID for RoCE v2 over IPv4 where the link is Ethernet (see
     * {@link RdmaDevice#roceGidIndex}), its active MTU; the MTU is lowered to the peer's at connect time.
     */
    public static ConnectOptions forDevice(RdmaDevice device, int readsInFlight) {
      int port = 1;
      return new ConnectOptions(port, device.roceGidIndex(port), device.port(port).activeMtu(), readsInFlight, 14, 7);
    }

    public ConnectOptions withMtu(int code) {
      return new ConnectOptions(port, gidIndex, Mtu.requireCode(code), readsInFlight, timeout, retries);
    }
  }

  /** Verbs' path MTU codes ({@code enum ibv_mtu}): 1 = 256 bytes up to 5 = 4096. */
  public static final class Mtu {
    private Mtu() {}

    public static int bytes(int code) {
      return 128 << requireCode(code);
    }

    /** The code of a path MTU in bytes (256, 512, 1024, 2048 or 4096). */
    public static int code(int bytes) {
      for (int code = 1; code <= 5; code++) {
        if (bytes(code) == bytes) {
          return code;
        }
      }
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "an RDMA path MTU is 256, 512, 1024, 2048 or 4096 "
          + "bytes, not " + bytes);
    }

    static int requireCode(int code) {
      if (code < 1 || code > 5) {
        throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "not a verbs MTU code (1..5): " + code);
      }
      return code;
    }
  }

  private static final SecureRandom RANDOM = new SecureRandom();

  final ProtectionDomain domain;
  final MemorySegment qp;
  private final CompletionQueue completions;
  private final int number;
  private final Capacity capacity;
  private final int packetSequence = RANDOM.nextInt(1 << 24);
  private boolean closed;

  private QueuePair(ProtectionDomain domain, MemorySegment qp, Capacity capacity, CompletionQueue completions) {
    this.domain = domain;
    this.qp = qp;
    this.completions = completions;
    this.number = qp.get(JAVA_INT, Layout.QP_NUM);
    this.capacity = capacity;
  }

  static QueuePair create(ProtectionDomain domain, CompletionQueue completions, Capacity capacity) {
    try (Arena scratch = Arena.ofConfined()) {
      MemorySegment attr = scratch.allocate(Layout.QP_INIT_ATTR_SIZE, 8);
      attr.set(ADDRESS, Layout.QP_INIT_ATTR_SEND_CQ, completions.cq);
      attr.set(ADDRESS, Layout.QP_INIT_ATTR_RECV_CQ, completions.cq);
      attr.set(JAVA_INT, Layout.QP_INIT_ATTR_CAP + Layout.QP_CAP_MAX_SEND_WR, capacity.sendRequests());
      attr.set(JAVA_INT, Layout.QP_INIT_ATTR_CAP + Layout.QP_CAP_MAX_RECV_WR, capacity.receiveRequests());
      attr.set(JAVA_INT, Layout.QP_INIT_ATTR_CAP + Layout.QP_CAP_MAX_SEND_SGE, capacity.scatterGather());
      attr.set(JAVA_INT, Layout.QP_INIT_ATTR_CAP + Layout.QP_CAP_MAX_RECV_SGE, 1);
      attr.set(JAVA_INT, Layout.QP_INIT_ATTR_QP_TYPE, Layout.QPT_RC);
      attr.set(JAVA_INT, Layout.QP_INIT_ATTR_SQ_SIG_ALL, 0);
      MemorySegment state = scratch.allocate(Verbs.CALL_STATE);
      MemorySegment qp = Verbs.require().createQp(state, domain.pd, attr);
      if (qp.equals(MemorySegment.NULL)) {
        throw Verbs.failure("ibv_create_qp", Verbs.errno(state));
      }
      qp = qp.reinterpret(Layout.QP_NUM + 8);
      if (qp.get(ADDRESS, Layout.QP_CONTEXT).address() != domain.device.context.address()) {
        Verbs.require().destroyQp(qp);
        throw RdmaDevice.layoutMismatch("ibv_qp");
      }
      return new QueuePair(domain, qp, capacity, completions);
    }
  }

  public int number() {
    return number;
  }

  public Capacity capacity() {
    return capacity;
  }

  /** This side's endpoint, to send to the peer. */
  public Endpoint endpoint(ConnectOptions options) {
    RdmaDevice.Port port = domain.device.port(options.port());
    return new Endpoint(number, packetSequence, domain.device.gid(options.port(), options.gidIndex()), port.lid());
  }

  /** The path MTU this queue pair is connected at, in bytes, as the device reports it ({@code ibv_query_qp}). */
  public int pathMtuBytes() {
    try (Arena scratch = Arena.ofConfined()) {
      MemorySegment attr = scratch.allocate(Layout.QP_ATTR_SIZE, 8);
      MemorySegment init = scratch.allocate(Layout.QP_INIT_ATTR_SIZE + 64, 8);
      int rc = Verbs.require().queryQp(qp, attr, Layout.QP_PATH_MTU, init);
      if (rc != 0) {
        throw Verbs.failure("ibv_query_qp", rc);
      }
      return Mtu.bytes(attr.get(JAVA_INT, Layout.QP_ATTR_PATH_MTU));
    }
  }

  /** INIT, then ready to receive from {@code remote}, then ready to send; the peer may read, never write. */
  public void connect(Endpoint remote, ConnectOptions options) {
    connect(remote, options, EnumSet.of(MemoryRegion.Access.REMOTE_READ));
  }

  /**
   * Connects as {@link #connect(Endpoint, ConnectOptions)} does, letting the peer use this side's memory as
   * {@code peerAccess} says ({@code REMOTE_READ}, {@code REMOTE_WRITE}, or both). The queue pair's flags only open
   * the door: a peer still reaches only memory registered (or a window bound) for that access, under its key.
   */
  public void connect(Endpoint remote, ConnectOptions options, Set<MemoryRegion.Access> peerAccess) {
    int access = 0;
    for (MemoryRegion.Access a : peerAccess) {
      if (a != MemoryRegion.Access.REMOTE_READ && a != MemoryRegion.Access.REMOTE_WRITE) {
        throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "a peer is granted REMOTE_READ or REMOTE_WRITE, "
            + "not " + a);
      }
      access |= a.flag;
    }
    try (Arena scratch = Arena.ofConfined()) {
      MemorySegment attr = scratch.allocate(Layout.QP_ATTR_SIZE, 8);
      attr.set(JAVA_INT, Layout.QP_ATTR_STATE, Layout.QPS_INIT);
      attr.set(JAVA_SHORT, Layout.QP_ATTR_PKEY_INDEX, (short) 0);
      attr.set(JAVA_BYTE, Layout.QP_ATTR_PORT_NUM, (byte) options.port());
      attr.set(JAVA_INT, Layout.QP_ATTR_ACCESS_FLAGS, access);
      modify(attr, Layout.QP_STATE | Layout.QP_PKEY_INDEX | Layout.QP_PORT | Layout.QP_ACCESS_FLAGS, "INIT");

      attr.fill((byte) 0);
      attr.set(JAVA_INT, Layout.QP_ATTR_STATE, Layout.QPS_RTR);
      attr.set(JAVA_INT, Layout.QP_ATTR_PATH_MTU, options.mtu());
      attr.set(JAVA_INT, Layout.QP_ATTR_DEST_QP_NUM, remote.queuePairNumber());
      attr.set(JAVA_INT, Layout.QP_ATTR_RQ_PSN, remote.packetSequence());
      attr.set(JAVA_BYTE, Layout.QP_ATTR_MAX_DEST_RD_ATOMIC, (byte) options.readsInFlight());
      attr.set(JAVA_BYTE, Layout.QP_ATTR_MIN_RNR_TIMER, (byte) 12);
      long ah = Layout.QP_ATTR_AH_ATTR;
      MemorySegment.copy(MemorySegment.ofArray(remote.gid()), 0, attr, ah + Layout.AH_ATTR_GRH_DGID, 16);
      attr.set(JAVA_BYTE, ah + Layout.AH_ATTR_GRH_SGID_INDEX, (byte) options.gidIndex());
      attr.set(JAVA_BYTE, ah + Layout.AH_ATTR_GRH_HOP_LIMIT, (byte) 1);
      attr.set(JAVA_SHORT, ah + Layout.AH_ATTR_DLID, (short) remote.lid());
      attr.set(JAVA_BYTE, ah + Layout.AH_ATTR_IS_GLOBAL, (byte) 1);
      attr.set(JAVA_BYTE, ah + Layout.AH_ATTR_PORT_NUM, (byte) options.port());
      modify(attr, Layout.QP_STATE | Layout.QP_AV | Layout.QP_PATH_MTU | Layout.QP_DEST_QPN | Layout.QP_RQ_PSN
          | Layout.QP_MAX_DEST_RD_ATOMIC | Layout.QP_MIN_RNR_TIMER, "RTR");

      attr.fill((byte) 0);
      attr.set(JAVA_INT, Layout.QP_ATTR_STATE, Layout.QPS_RTS);
      attr.set(JAVA_BYTE, Layout.QP_ATTR_TIMEOUT, (byte) options.timeout());
      attr.set(JAVA_BYTE, Layout.QP_ATTR_RETRY_CNT, (byte) options.retries());
      attr.set(JAVA_BYTE, Layout.QP_ATTR_RNR_RETRY, (byte) 7);
      attr.set(JAVA_INT, Layout.QP_ATTR_SQ_PSN, packetSequence);
      attr.set(JAVA_BYTE, Layout.QP_ATTR_MAX_RD_ATOMIC, (byte) options.readsInFlight());
      modify(attr, Layout.QP_STATE | Layout.QP_TIMEOUT | Layout.QP_RETRY_CNT | Layout.QP_RNR_RETRY | Layout.QP_SQ_PSN
          | Layout.QP_MAX_QP_RD_ATOMIC, "RTS");
    }
  }

  private void modify(MemorySegment attr, int mask, String state) {
    int rc = Verbs.require().modifyQp(qp, attr, mask);
    if (rc != 0) {
      throw Verbs.failure("ibv_modify_qp to " + state, rc);
    }
  }

  /** Posts a chain of work requests built in native memory ({@code ibv_post_send} through the ops table). */
  void post(MemorySegment requests, MemorySegment badRequest, String what) {
    int rc;
    try {
      rc = (int) Verbs.POST_SEND.invokeExact(domain.device.postSend, qp, requests, badRequest);
    } catch (Throwable e) {
      throw new IllegalStateException("ibv_post_send failed to run: " + e, e);
    }
    if (rc != 0) {
      throw Verbs.failure("ibv_post_send (" + what + ")", rc);
    }
  }

  /** Posts a chain of receive requests built in native memory ({@code ibv_post_recv} through the ops table). */
  void postReceive(MemorySegment requests, MemorySegment badRequest, String what) {
    int rc;
    try {
      rc = (int) Verbs.POST_RECV.invokeExact(domain.device.postRecv, qp, requests, badRequest);
    } catch (Throwable e) {
      throw new IllegalStateException("ibv_post_recv failed to run: " + e, e);
    }
    if (rc != 0) {
      throw Verbs.failure("ibv_post_recv (" + what + ")", rc);
    }
  }

  /**
   * A reusable chain of up to {@code requests} SEND, SEND with immediate, RDMA WRITE and RDMA WRITE with immediate
   * work requests for this queue pair.
   */
  public SendChain newSendChain(int requests) {
    return new SendChain(this, requests);
  }

  /** {@code slots} receive requests for this queue pair, built once and reposted one by one. */
  public ReceiveSlots newReceiveSlots(int slots) {
    if (slots < 1 || slots > capacity.receiveRequests()) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "1.." + capacity.receiveRequests()
          + " receive slots fit this queue pair, not " + slots);
    }
    return new ReceiveSlots(this, slots);
  }

  /** A reusable chain of up to {@code requests} RDMA READ work requests for this queue pair. */
  public ReadChain newReadChain(int requests) {
    return new ReadChain(this, requests);
  }

  /**
   * Binds and invalidates memory windows of this domain for this queue pair's peer. It waits on the queue pair's
   * completion queue, which must then serve this queue pair alone and carry no other signalled work.
   */
  public WindowBinder newWindowBinder() {
    return new WindowBinder(this, completions);
  }

  @Override
  public synchronized void close() {
    if (!closed) {
      closed = true;
      Verbs.require().destroyQp(qp);
    }
  }
}
