package io.thallus.rdma.transport;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.rdma.verbs.CompletionQueue;
import io.thallus.rdma.verbs.MemoryRegion;
import io.thallus.rdma.verbs.MemoryWindow;
import io.thallus.rdma.verbs.ProtectionDomain;
import io.thallus.rdma.verbs.QueuePair;
import io.thallus.rdma.verbs.RdmaDevice;
import io.thallus.rdma.verbs.RegisteredBufferPool;
import io.thallus.rdma.verbs.WindowBinder;
import io.thallus.spi.BatchPart;
import io.thallus.spi.BufferDescriptor;
import io.thallus.spi.Deadline;
import io.thallus.spi.IngestFetcher;
import io.thallus.spi.PackedBody;
import io.thallus.spi.PlacedBody;
import io.thallus.spi.ServerSession;
import io.thallus.spi.ServerTransport;
import io.thallus.spi.Transport;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.ForeignAllocation;

/**
 * The rdma transport's server side: one device per server; per client a protection domain of its own, a queue pair
 * and a pool of registered, page-aligned buffers. A batch is packed into one pool buffer (one copy, no registration
 * on the data path once the pool is warm) and stays there until core frees its placement; a large one (at least
 * {@value RdmaTransport#IN_PLACE_BYTES_PROPERTY}) is exposed where DuckDB left it instead, when the client reads
 * buffer by buffer: each buffer registered exactly, for this client's domain, until the client releases the batch.
 * Registering costs about what copying does at 4 MiB and an eighth of it at 64 MiB (measured in the guest).
 *
 * <p>Where the device has type 2B memory windows (rxe does, as do ConnectX NICs), the buffers grant no remote access
 * themselves: each batch gets a window bound to its bytes for the client's queue pair, and its key is sent in the
 * descriptor. On release the window is invalidated, so a stale descriptor is refused by the device (REM_ACCESS_ERR),
 * and every bind gives a new key, so a key never comes back to life when its buffer or window is reused. Without
 * windows the buffers are registered remote-read and their keys stay valid while the client is connected. Either
 * way the domain is the client's own: no other client can read its batches, whatever descriptor it sends. A batch
 * exposed in place needs no window: each registration covers exactly one buffer's bytes, remote read only, and is
 * deregistered (its key dead) before the buffer goes back to DuckDB.
 */
final class RdmaServer implements ServerTransport {
  /** Set to false to measure without memory windows; a device without them never uses them. */
  static final String MEMORY_WINDOWS_PROPERTY = "thallus.rdma.memoryWindows";

  private final Context context;
  private final RdmaDevice device;
  private final QueuePair.ConnectOptions options;
  /** The write direction's queue pair: the server reads through it. */
  private final QueuePair.ConnectOptions ingestOptions;
  private final boolean windows;
  /** This side's path MTU code, said in WELCOME. */
  private final int localMtu;
  /** Bodies of at least this many bytes are exposed in place for clients that read buffer by buffer. */
  private final long inPlaceBytes;
  /** The ring each client that pushes its ingested bodies gets, in bytes; 0: none. */
  private final int ringBytes;

  private RdmaServer(Context context, RdmaDevice device, long inPlaceBytes) {
    this.context = context;
    this.device = device;
    RdmaDevice.Attributes attributes = device.attributes();
    this.options = QueuePair.ConnectOptions.forDevice(device, Math.min(16, attributes.maxReadsInFlightAsTarget()));
    this.ingestOptions = QueuePair.ConnectOptions.forDevice(device,
        Math.min(16, attributes.maxReadsInFlightAsInitiator()));
    this.localMtu = RdmaTransport.localMtu(options);
    this.windows = attributes.memoryWindows()
        && Boolean.parseBoolean(System.getProperty(MEMORY_WINDOWS_PROPERTY, "true"));
    this.inPlaceBytes = inPlaceBytes;
    this.ringBytes = RdmaTransport.pushRingBytes();
  }

  static ServerTransport start(Context context) {
    return start(context, RdmaTransport.inPlaceBytes());
  }

  /** {@code inPlaceBytes}: bodies of at least this size are exposed in place for clients that read buffer by buffer. */
  static ServerTransport start(Context context, long inPlaceBytes) {
    if (!RdmaDevice.isSupported() || RdmaDevice.deviceNames().isEmpty()) {
      return new Unavailable("no RDMA device on the server");
    }
    return new RdmaServer(context, RdmaDevice.open(RdmaTransport.deviceName()), inPlaceBytes);
  }

  @Override
  public ServerSession accept(InetSocketAddress client, Map<String, String> offer, BufferAllocator clientMemory) {
    QueuePair.Endpoint remote = QueuePair.Endpoint.decode(Transport.requireParameter(offer, RdmaTransport.ENDPOINT));
    String ingestEndpoint = offer.get(RdmaTransport.INGEST_ENDPOINT);
    int mtu = RdmaTransport.agreedMtu(localMtu, offer);
    int readsPerBatch = RdmaTransport.readsPerBatch(offer);
    ProtectionDomain domain = device.allocateProtectionDomain();
    // The session's own completion queue: its window binder waits there, for its own work only.
    CompletionQueue completions = null;
    QueuePair pair = null;
    CompletionQueue ingestCompletions = null;
    QueuePair ingestPair = null;
    IngestRing ring = null;
    try {
      completions = device.createCompletionQueue(16);
      pair = domain.createQueuePair(completions, new QueuePair.Capacity(16, 1));
      pair.connect(remote, options.withMtu(mtu));
      if (ingestEndpoint != null) {
        ingestCompletions = device.createCompletionQueue(4);
        ingestPair = domain.createQueuePair(ingestCompletions, new QueuePair.Capacity(2, 1));
        ingestPair.connect(QueuePair.Endpoint.decode(ingestEndpoint), ingestOptions.withMtu(mtu));
      }
      if (ingestPair != null) {
        ring = pushRing(offer, domain, mtu);
      }
      return new Session(domain, completions, pair, new RegisteredBufferPool(domain,
          EnumSet.of(windows ? MemoryRegion.Access.MEMORY_WINDOW_BIND : MemoryRegion.Access.REMOTE_READ),
          context.memoryPerClient()), readsPerBatch, ingestCompletions, ingestPair, ring, clientMemory);
    } catch (RuntimeException e) {
      if (ring != null) {
        ring.close();
      }
      if (ingestPair != null) {
        ingestPair.close();
      }
      if (ingestCompletions != null) {
        ingestCompletions.close();
      }
      if (pair != null) {
        pair.close();
      }
      if (completions != null) {
        completions.close();
      }
      domain.close();
      throw e;
    }
  }

  /**
   * The ring a client that pushes its ingested bodies writes into (it offered a sending queue pair in HELLO),
   * registered in its domain and connected to take its writes; null for a client that reads, or where rings are off
   * ({@value RdmaTransport#PUSH_RING_BYTES_PROPERTY} = 0): the client then reads. Like the connection's receive
   * pool, the ring is registered memory of the connection rather than of a batch: it is not counted as batch memory,
   * and it is at most a quarter of the client's budget.
   */
  private IngestRing pushRing(Map<String, String> offer, ProtectionDomain domain, int mtu) {
    String sender = offer.get(RdmaTransport.PUSH_ENDPOINT);
    int messages = Math.min(IngestPushes.MESSAGES, RdmaTransport.pushMessages(offer));
    int bytes = (int) Math.min(ringBytes, context.memoryPerClient() / 4);
    if (sender == null || messages < 1 || bytes < 4096) {
      return null;
    }
    QueuePair.Endpoint endpoint = QueuePair.Endpoint.decode(sender);
    IngestRing ring = IngestRing.create(domain, bytes, messages);
    try {
      ring.connect(endpoint, options.withMtu(mtu));
      return ring;
    } catch (RuntimeException e) {
      ring.close();
      throw e;
    }
  }

  /** Whether batches are exposed through per-batch memory windows (see the class comment). */
  boolean usesMemoryWindows() {
    return windows;
  }

  @Override
  public void close() {
    device.close();
  }

  /** One client's domain, queue pair, registered buffers, and the windows of the batches it may still read. */
  private final class Session implements ServerSession {
    private final ProtectionDomain domain;
    private final CompletionQueue completions;
    private final QueuePair pair;
    private final WindowBinder binder;
    private final RegisteredBufferPool exposed;
    private final ArrayDeque<MemoryWindow> freeWindows = new ArrayDeque<>();
    private final java.util.Set<Placed> live = new java.util.HashSet<>();
    /** The most READs the client posts for one batch: 0 for a client that reads a packed body only. */
    private final int readsPerBatch;
    private final java.util.Set<InPlace> liveInPlace = new java.util.HashSet<>();
    /** The write direction (null for a client without it): its queue pair, and what reads through it. */
    private final CompletionQueue ingestCompletions;
    private final QueuePair ingestPair;
    private IngestReads ingestReads;
    /** The ring the client pushes ingested bodies into: null where it reads them all. */
    private final IngestRing ring;
    /** The client's own budget, inside its credential's: exposed buffers count there while the client may read them. */
    private final BufferAllocator clientMemory;
    private boolean closed;

    Session(ProtectionDomain domain, CompletionQueue completions, QueuePair pair, RegisteredBufferPool exposed,
        int readsPerBatch, CompletionQueue ingestCompletions, QueuePair ingestPair, IngestRing ring,
        BufferAllocator clientMemory) {
      this.ring = ring;
      this.clientMemory = clientMemory;
      this.domain = domain;
      this.completions = completions;
      this.pair = pair;
      this.binder = pair.newWindowBinder();
      this.exposed = exposed;
      this.readsPerBatch = readsPerBatch;
      this.ingestCompletions = ingestCompletions;
      this.ingestPair = ingestPair;
    }

    @Override
    public Map<String, String> welcomeParameters() {
      Map<String, String> welcome = new java.util.HashMap<>();
      welcome.put(RdmaTransport.ENDPOINT, pair.endpoint(options).encode());
      welcome.put(RdmaTransport.MTU, Integer.toString(QueuePair.Mtu.bytes(localMtu)));
      if (ingestPair != null) {
        welcome.put(RdmaTransport.INGEST_ENDPOINT, ingestPair.endpoint(ingestOptions).encode());
      }
      if (ring != null) {
        welcome.put(RdmaTransport.PUSH_ENDPOINT, ring.endpoint(options).encode());
        welcome.put(RdmaTransport.PUSH_RING, ring.ring().encode());
      }
      return Map.copyOf(welcome);
    }

    /**
     * Ingested bodies are pulled with one RDMA READ each, as they arrive, into registered buffers of the client's
     * budget: the Thallus pull turned around, the server in control of its own memory.
     */
    @Override
    public synchronized IngestFetcher ingestFetcher(Map<String, String> parameters) {
      if (closed) {
        throw ThallusException.of(StatusCode.UNAVAILABLE, "the client's rdma session is closed");
      }
      if (ingestPair == null) {
        throw ThallusException.of(StatusCode.UNIMPLEMENTED, "this client's rdma has no write direction");
      }
      if (ingestReads == null) {
        ingestReads = new IngestReads(ingestPair, ingestCompletions, new RegisteredBufferPool(domain,
            EnumSet.of(MemoryRegion.Access.LOCAL_WRITE), context.memoryPerClient()), context.ioTimeout(),
            ring);
      }
      return ingestReads;
    }

    /**
     * Exposes a large body in place, else copies it into a pooled registered buffer and exposes that; null while the
     * pool has no buffer free.
     */
    @Override
    public PlacedBody place(PackedBody body, Deadline deadline) {
      if (body.length() >= inPlaceBytes) {
        PlacedBody inPlace = exposeInPlace(body);
        if (inPlace != null) {
          return inPlace;
        }
      }
      RegisteredBufferPool.Buffer buffer = exposed.tryBorrow(Math.max(body.length(), 8));
      if (buffer == null) {
        return null;
      }
      try {
        body.copyTo(buffer.address());
        return expose(buffer, body, deadline);
      } catch (RuntimeException e) {
        buffer.close();
        throw e;
      }
    }

    /**
     * Keeps the buffer for the client, accounted by the client's allocator while it is held, under the key the client
     * reads its first {@code length} bytes with: a window's, bound for this client's queue pair alone, or the
     * buffer's own without windows.
     */
    private synchronized Placed expose(RegisteredBufferPool.Buffer buffer, PackedBody body, Deadline deadline) {
      if (closed) {
        throw ThallusException.of(StatusCode.UNAVAILABLE, "the client's rdma session is closed");
      }
      ArrowBuf accounted = clientMemory.wrapForeignAllocation(
          new ForeignAllocation(buffer.size(), buffer.address()) {
            @Override
            protected void release0() {
              // The pool owns the memory; this ends only the allocator's accounting.
            }
          });
      MemoryWindow window = null;
      int remoteKey = buffer.remoteKey();
      if (windows) {
        // Bound last, so that nothing after it can fail and leave a bound window behind (it would pin the region).
        try {
          window = freeWindows.isEmpty() ? domain.allocateMemoryWindow() : freeWindows.poll();
          remoteKey = binder.bind(window, buffer.region(), buffer.address(), body.length(), deadline);
        } catch (RuntimeException e) {
          if (window != null) {
            window.close();
          }
          accounted.close();
          throw e;
        }
      }
      Placed placed = new Placed(buffer, window, accounted, body.relocated(buffer.address(), remoteKey));
      live.add(placed);
      return placed;
    }

    /** A batch the client may still read, its window (null without windows), and its allocator accounting. */
    private final class Placed implements PlacedBody {
      private final RegisteredBufferPool.Buffer buffer;
      private final MemoryWindow window;
      private final ArrowBuf accounted;
      private final List<BatchPart> parts;

      Placed(RegisteredBufferPool.Buffer buffer, MemoryWindow window, ArrowBuf accounted, List<BatchPart> parts) {
        this.buffer = buffer;
        this.window = window;
        this.accounted = accounted;
        this.parts = parts;
      }

      @Override
      public List<BatchPart> parts() {
        return parts;
      }

      /**
       * The client is done with the batch: its window is invalidated before the buffer can be reused, so from here
       * on a read with the batch's descriptor is refused by the device.
       */
      @Override
      public void close() {
        synchronized (Session.this) {
          if (!live.remove(this)) {
            return;
          }
          try {
            if (window != null) {
              retire(window);
            }
          } finally {
            accounted.close();
            buffer.close();
          }
        }
      }
    }

    /**
     * Registers each of the body's buffers where it lies, exactly its bytes, remote read, in this client's domain, and
     * keeps the buffers alive until the registrations are gone. Null (the caller copies instead) when the client reads
     * fewer buffers per batch than this one has, or memory cannot be registered where it lies.
     */
    private PlacedBody exposeInPlace(PackedBody body) {
      int reads = 0;
      for (ArrowBuf buffer : body.buffers()) {
        reads += buffer.readableBytes() > 0 ? 1 : 0;
      }
      if (reads == 0 || reads > readsPerBatch) {
        return null;
      }
      List<MemoryRegion> regions = new ArrayList<>(reads);
      List<BatchPart> parts = new ArrayList<>(body.parts().size());
      try {
        int index = 0;
        for (BatchPart part : body.parts()) {
          List<BufferDescriptor> buffers = new ArrayList<>(part.buffers().size());
          for (BufferDescriptor packed : part.buffers()) {
            ArrowBuf source = body.buffers().get(index++);
            if (packed.length() == 0) {
              buffers.add(new BufferDescriptor(0, 0, RdmaTransport.NO_KEY));
              continue;
            }
            MemoryRegion region = domain.register(source.memoryAddress(), packed.length(),
                EnumSet.of(MemoryRegion.Access.REMOTE_READ));
            regions.add(region);
            if (region.remoteKey() == RdmaTransport.NO_KEY) {
              // The client would take the batch for a packed one (one key throughout) and read it wrong: copy it.
              regions.forEach(MemoryRegion::close);
              return null;
            }
            buffers.add(new BufferDescriptor(region.address(), packed.length(), region.remoteKey()));
          }
          parts.add(part.withBuffers(buffers));
        }
      } catch (ThallusException e) {
        // Memory the kernel will not pin where it lies (a mapping it refuses, the locked-memory limit): the copy
        // into the pool, registered long ago, still works.
        regions.forEach(MemoryRegion::close);
        return null;
      }
      InPlace placed = new InPlace(regions, body.buffers(), parts);
      synchronized (this) {
        if (closed) {
          placed.free();
          throw ThallusException.of(StatusCode.UNAVAILABLE, "the client's rdma session is closed");
        }
        liveInPlace.add(placed);
      }
      return placed;
    }

    /**
     * A batch the client reads where it lies: one registration per buffer, and a reference to each buffer, so the
     * memory stays this batch's while any key to it works.
     */
    private final class InPlace implements PlacedBody {
      private final List<MemoryRegion> regions;
      private final List<ArrowBuf> kept;
      private final List<BatchPart> parts;

      InPlace(List<MemoryRegion> regions, List<ArrowBuf> buffers, List<BatchPart> parts) {
        this.regions = regions;
        this.kept = List.copyOf(buffers);
        this.parts = parts;
        kept.forEach(buffer -> buffer.getReferenceManager().retain());
      }

      @Override
      public List<BatchPart> parts() {
        return parts;
      }

      @Override
      public void close() {
        synchronized (Session.this) {
          // Under the session's lock: its close must not free the domain while these regions are still in it.
          if (liveInPlace.remove(this)) {
            free();
          }
        }
      }

      /** Deregisters first (every key dies), and only then gives the buffers back to their owner. */
      void free() {
        try {
          regions.forEach(MemoryRegion::close);
        } finally {
          kept.forEach(buffer -> buffer.getReferenceManager().release());
        }
      }
    }

    private void retire(MemoryWindow window) {
      try {
        binder.invalidate(window, Deadline.after(context.ioTimeout()));
        freeWindows.add(window);
      } catch (RuntimeException e) {
        // The queue pair has failed (the client went away): freeing the window kills its key just the same.
        window.close();
      }
    }

    @Override
    public synchronized void close() {
      if (closed) {
        return;
      }
      closed = true;
      // Windows go first (a bound window holds the queue pair and its region), then the queue pair: once both are
      // gone no read of this client can reach the buffers returned below.
      for (Placed batch : live) {
        if (batch.window != null) {
          batch.window.close();
        }
      }
      freeWindows.forEach(MemoryWindow::close);
      freeWindows.clear();
      pair.close();
      if (ingestPair != null) {
        // Before its buffers go: no read can land in them after this.
        ingestPair.close();
      }
      if (ingestReads != null) {
        ingestReads.close();
      }
      if (ring != null) {
        // Its queue pair first, then the ring's memory.
        ring.close();
      }
      binder.close();
      for (Placed batch : live) {
        batch.accounted.close();
        batch.buffer.close();
      }
      live.clear();
      liveInPlace.forEach(InPlace::free);
      liveInPlace.clear();
      exposed.close();
      completions.close();
      if (ingestCompletions != null) {
        ingestCompletions.close();
      }
      domain.close();
    }
  }

  /** Where the server has no device: every client is told so, and picks another transport. */
  private record Unavailable(String reason) implements ServerTransport {
    @Override
    public ServerSession accept(InetSocketAddress client, Map<String, String> offer, BufferAllocator clientMemory) {
      throw ThallusException.of(StatusCode.UNAVAILABLE, reason);
    }

    @Override
    public void close() {}
  }
}
