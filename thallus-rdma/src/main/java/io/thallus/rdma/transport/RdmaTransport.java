package io.thallus.rdma.transport;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.rdma.verbs.QueuePair;
import io.thallus.rdma.verbs.RdmaDevice;
import io.thallus.spi.ClientOffer;
import io.thallus.spi.ServerTransport;
import io.thallus.spi.Transport;
import java.util.List;

/**
 * Thallus over verbs: the server places each batch in registered memory, the BATCH message carries its address and
 * remote key, and the client pulls it with one RDMA READ into a registered receive buffer that becomes the batch's
 * {@code ArrowBuf}s. The queue pairs are connected through HELLO and WELCOME on the control connection. Chosen
 * by name ({@code thallus+rdma://}) or as the best transport where both sides have an RDMA device.
 */
public final class RdmaTransport implements Transport {
  public static final String NAME = "rdma";
  static final String ENDPOINT = NAME + ".endpoint";
  /**
   * The queue pairs of the write direction (ingest), one more on each side: on it the server is the one that reads.
   * A queue pair of its own keeps these reads' completions apart from the server's window binds (whose completion
   * queue the binder owns) and from the client's reads.
   */
  static final String INGEST_ENDPOINT = NAME + ".ingest_endpoint";
  /**
   * Ingest by RDMA WRITE ({@link IngestTransfer}): in HELLO the client's sending queue pair and how many messages it
   * keeps in flight; in WELCOME the server's receiving queue pair and its ring ({@code PushRing.encode()}). A client
   * that reads only says nothing, and a server that offers no ring answers nothing: the client then reads.
   */
  static final String PUSH_ENDPOINT = NAME + ".push_endpoint";
  static final String PUSH_MESSAGES = NAME + ".push_messages";
  static final String PUSH_RING = NAME + ".push_ring";
  /**
   * System property: the bytes of the ring a server registers for each client that pushes its ingested bodies
   * ({@link IngestTransfer#WRITE}, {@link IngestTransfer#BY_SIZE}), while it is connected; at most a quarter of the
   * client's memory budget. Default {@value #DEFAULT_PUSH_RING_BYTES}; 0 offers no ring (such clients read).
   */
  public static final String PUSH_RING_BYTES_PROPERTY = "thallus.rdma.pushRingBytes";
  static final int DEFAULT_PUSH_RING_BYTES = 8 << 20;
  /** This side's largest path MTU, in bytes: each side says it at the handshake, both connect at the smaller. */
  static final String MTU = NAME + ".mtu";
  /**
   * How many RDMA READs the client posts for one batch at most, said in HELLO: a server may then expose a batch's
   * buffers where they lie, each under a key of its own, rather than packed in one place (a client that does not say
   * gets packed bodies, one READ each).
   */
  static final String READS_PER_BATCH = NAME + ".reads_per_batch";
  /** The key an empty buffer of a batch exposed in place names (it is never read); no region of it has this key. */
  static final int NO_KEY = 0;
  /**
   * System property: bodies of at least this many bytes are exposed in place (each buffer registered where DuckDB
   * left it, no copy) instead of copied into pre-registered memory. Default {@value #DEFAULT_IN_PLACE_BYTES}, the
   * measured crossover; 0 exposes every out-of-line body in place, a huge value never.
   */
  public static final String IN_PLACE_BYTES_PROPERTY = "thallus.rdma.inPlaceBytes";
  static final long DEFAULT_IN_PLACE_BYTES = 16L << 20;
  /** System property capping the path MTU, in bytes (256..4096); default: the port's active MTU. */
  public static final String MTU_PROPERTY = "thallus.rdma.mtu";
  /** System property naming the device to use; default: rxe0 if present, else the first device. */
  static final String DEVICE_PROPERTY = "thallus.rdma.device";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public int preference() {
    return 40;
  }

  @Override
  public boolean isAvailableFor(String host) {
    return RdmaDevice.isSupported() && !RdmaDevice.deviceNames().isEmpty();
  }

  /**
   * Whether the peer exposed the batch buffer by buffer (where its buffers lie, a key each; an empty buffer names
   * {@link #NO_KEY}) rather than packed in one place, where every descriptor names that place's key: then it is read
   * with a READ per buffer. A batch of one buffer exposed in place names one key too, and its one READ is right.
   */
  static boolean exposedInPlace(io.thallus.spi.BatchHeader header) {
    Integer key = null;
    for (io.thallus.spi.BatchPart part : header.parts()) {
      for (io.thallus.spi.BufferDescriptor d : part.buffers()) {
        if (key != null && d.key() != key) {
          return true;
        }
        key = d.key();
      }
    }
    return false;
  }

  /** Where a batch's body lies on the peer, to be read with one RDMA READ: its extent, checked to be one read. */
  static io.thallus.spi.BufferDescriptor oneRead(io.thallus.spi.BatchHeader header) {
    io.thallus.spi.BufferDescriptor extent = header.extent();
    if (extent == null) {
      throw ThallusException.of(StatusCode.PROTOCOL_ERROR, "batch " + header.batchId() + " has no bytes to read");
    }
    if (extent.length() > Integer.MAX_VALUE) {
      throw ThallusException.of(StatusCode.PROTOCOL_ERROR, "batch " + header.batchId() + " body of "
          + extent.length() + " bytes is larger than one read");
    }
    return extent;
  }

  /**
   * This side's path MTU code: the port's active MTU (RoCE: what the netdev's MTU allows, 4096 at a 9000-byte
   * Ethernet MTU and 1024 at 1500), lowered to {@value #MTU_PROPERTY} when an operator set it.
   */
  static int localMtu(QueuePair.ConnectOptions options) {
    String cap = System.getProperty(MTU_PROPERTY);
    if (cap == null) {
      return options.mtu();
    }
    try {
      return Math.min(options.mtu(), QueuePair.Mtu.code(Integer.parseInt(cap.strip())));
    } catch (NumberFormatException | ThallusException e) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, MTU_PROPERTY + " must be 256, 512, 1024, 2048 or 4096,"
          + " not " + cap, e);
    }
  }

  /** The MTU both ends support: the smaller of this side's and the peer's (a peer that does not say used 1024). */
  static int agreedMtu(int local, java.util.Map<String, String> peer) {
    return Math.min(local, QueuePair.Mtu.code(said(peer, MTU, 1024)));
  }

  /** The READs per batch a peer said it posts at most ({@value #READS_PER_BATCH}); 0 when it did not say. */
  static int readsPerBatch(java.util.Map<String, String> peer) {
    return Math.max(0, said(peer, READS_PER_BATCH, 0));
  }

  /** The number a peer said under {@code key} at the handshake, or {@code unsaid} when it did not say it. */
  private static int said(java.util.Map<String, String> peer, String key, int unsaid) {
    String value = peer.get(key);
    try {
      return value == null ? unsaid : Integer.parseInt(value.strip());
    } catch (NumberFormatException e) {
      throw ThallusException.of(StatusCode.PROTOCOL_ERROR, "the peer's " + key + " is not a number: " + value);
    }
  }

  /** The push messages a client said it keeps in flight ({@value #PUSH_MESSAGES}); 0 when it did not say. */
  static int pushMessages(java.util.Map<String, String> peer) {
    return Math.max(0, said(peer, PUSH_MESSAGES, 0));
  }

  /** {@value #PUSH_RING_BYTES_PROPERTY}, checked: 0 (no ring) up to 1 GiB. */
  static int pushRingBytes() {
    String value = System.getProperty(PUSH_RING_BYTES_PROPERTY);
    if (value == null) {
      return DEFAULT_PUSH_RING_BYTES;
    }
    try {
      int bytes = Integer.parseInt(value.strip());
      if (bytes >= 0 && bytes <= 1 << 30) {
        return bytes;
      }
    } catch (NumberFormatException e) {
      // named below
    }
    throw ThallusException.of(StatusCode.INVALID_ARGUMENT, PUSH_RING_BYTES_PROPERTY
        + " must be a number of bytes from 0 to 1 GiB, not " + value);
  }

  /** {@value #IN_PLACE_BYTES_PROPERTY}, checked. */
  static long inPlaceBytes() {
    String value = System.getProperty(IN_PLACE_BYTES_PROPERTY);
    if (value == null) {
      return DEFAULT_IN_PLACE_BYTES;
    }
    try {
      long bytes = Long.parseLong(value.strip());
      if (bytes >= 0) {
        return bytes;
      }
    } catch (NumberFormatException e) {
      // named below
    }
    throw ThallusException.of(StatusCode.INVALID_ARGUMENT, IN_PLACE_BYTES_PROPERTY
        + " must be a number of bytes (0 or more), not " + value);
  }

  static String deviceName() {
    List<String> names = RdmaDevice.deviceNames();
    if (names.isEmpty()) {
      throw ThallusException.of(StatusCode.UNAVAILABLE, "no RDMA device on this machine");
    }
    String wanted = System.getProperty(DEVICE_PROPERTY);
    if (wanted != null) {
      return wanted;
    }
    return names.contains("rxe0") ? "rxe0" : names.getFirst();
  }

  @Override
  public ServerTransport startServer(ServerTransport.Context context) {
    return RdmaServer.start(context);
  }

  @Override
  public ClientOffer offer(ClientOffer.Context context) {
    return RdmaClientSession.offer(context);
  }
}
