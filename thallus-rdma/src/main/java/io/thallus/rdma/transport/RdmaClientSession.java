package io.thallus.rdma.transport;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.rdma.push.PushRing;
import io.thallus.rdma.verbs.CompletionQueue;
import io.thallus.rdma.verbs.MemoryRegion;
import io.thallus.rdma.verbs.ProtectionDomain;
import io.thallus.rdma.verbs.QueuePair;
import io.thallus.rdma.verbs.RdmaDevice;
import io.thallus.rdma.verbs.ReadChain;
import io.thallus.rdma.verbs.RegisteredBufferPool;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.BufferDescriptor;
import io.thallus.spi.ClientOffer;
import io.thallus.spi.ClientSession;
import io.thallus.spi.Deadline;
import io.thallus.spi.FetchedBody;
import io.thallus.spi.IngestPlacer;
import io.thallus.spi.PlacedBody;
import io.thallus.spi.Transport;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The rdma transport's client side. Its queue pair exists before HELLO (the offer carries its endpoint) and is
 * connected with the server's from WELCOME. Each fetch is one RDMA READ of the packed body into a registered, pooled
 * receive buffer, or, for a batch the server exposed where it lies (one key per buffer), one chained READ per buffer
 * packing them into the receive buffer; posted from the control thread as the BATCH arrives (up to
 * {@value #IN_FLIGHT} batches at once). The control thread looks for completions right after each post (on Soft-RoCE
 * the post runs the read, so it is often in already, which saves a thread hand-off); a completion thread waits
 * event-driven for the rest. The receive buffer goes back to
 * the pool when core releases the body; the server's copy may go as soon as the read is in.
 */
final class RdmaClientSession implements ClientSession {
  /** Reads posted and not yet complete, at most: enough to keep the device busy while the consumer works. */
  private static final int IN_FLIGHT = 8;
  /**
   * READs one batch may take, at most, where the device's send queue holds {@value #IN_FLIGHT} such batches: said in
   * HELLO, so the server exposes in place only batches with no more buffers (a wide table's are copied). 256 covers
   * about 100 columns.
   */
  private static final int READS_PER_BATCH_MAX = 256;

  /** A posted read, waiting for its completion. */
  private record Pending(long sequence, BatchHeader header, RegisteredBufferPool.Buffer buffer, long start,
      long length, boolean packed, int chain, Fetched done, long postedNanos) {}

  private final ClientOffer.Context context;
  private final RdmaDevice device;
  private final ProtectionDomain domain;
  private final CompletionQueue completions;
  private final QueuePair pair;
  private final ReadChain[] chains;
  /** READs one batch may take here: {@value #READS_PER_BATCH_MAX}, or what the device's send queue allows. */
  private final int readsPerBatch;
  private final ArrayDeque<Integer> freeChains = new ArrayDeque<>();
  /** Posted reads in posting order; a queue pair completes them in that order. */
  private final ArrayDeque<Pending> pending = new ArrayDeque<>();
  /** Held by whoever polls the completion queue (the control thread after a post, or the completion thread). */
  private final ReentrantLock polling = new ReentrantLock();
  private final Thread completer;
  private final RegisteredBufferPool receive;
  private final QueuePair.ConnectOptions options;
  /** This side's path MTU code, said in HELLO. */
  private final int localMtu;
  /** The write direction: a queue pair the server reads ingested bodies through, from buffers exposed below. */
  private final CompletionQueue ingestCompletions;
  private final QueuePair ingestPair;
  private final QueuePair.ConnectOptions ingestOptions;
  private boolean ingestConnected;
  private RegisteredBufferPool exposed;
  private IngestPlacer placer;
  /** How ingested bodies reach the server ({@value IngestTransfer#PROPERTY}). */
  private final IngestTransfer transfer;
  /** Ingest by RDMA WRITE into the server's ring: null where this client only reads. */
  private final IngestPushes pushes;
  private long reads;
  private volatile boolean failed;
  private int lent;
  private boolean closed;
  /** Set once close() has released the queue pair and what was pending: only then may the verbs objects go. */
  private boolean tornDown;
  private boolean destroyed;

  private RdmaClientSession(ClientOffer.Context context, RdmaDevice device) {
    this.context = context;
    this.device = device;
    this.domain = device.allocateProtectionDomain();
    this.completions = device.createCompletionQueue(64);
    this.readsPerBatch = Math.max(1, Math.min(READS_PER_BATCH_MAX,
        device.attributes().maxQueuePairRequests() / IN_FLIGHT));
    this.pair = domain.createQueuePair(completions, new QueuePair.Capacity(IN_FLIGHT * readsPerBatch, 1));
    this.chains = new ReadChain[IN_FLIGHT];
    for (int i = 0; i < IN_FLIGHT; i++) {
      chains[i] = pair.newReadChain(readsPerBatch);
      freeChains.add(i);
    }
    this.completer = Thread.ofPlatform().name("thallus-client-rdma-completions").daemon()
        .unstarted(this::completeLoop);
    this.receive = new RegisteredBufferPool(domain, EnumSet.of(MemoryRegion.Access.LOCAL_WRITE),
        context.receivePoolBytes());
    this.options = QueuePair.ConnectOptions.forDevice(device, Math.min(16,
        device.attributes().maxReadsInFlightAsInitiator()));
    this.localMtu = RdmaTransport.localMtu(options);
    this.ingestCompletions = device.createCompletionQueue(4);
    this.ingestPair = domain.createQueuePair(ingestCompletions, new QueuePair.Capacity(1, 1));
    this.ingestOptions = QueuePair.ConnectOptions.forDevice(device, Math.min(16,
        device.attributes().maxReadsInFlightAsTarget()));
    this.transfer = IngestTransfer.configured();
    this.pushes = transfer == IngestTransfer.READ ? null : new IngestPushes(domain);
  }

  static ClientOffer offer(ClientOffer.Context context) {
    RdmaClientSession session = new RdmaClientSession(context, RdmaDevice.open(RdmaTransport.deviceName()));
    return new ClientOffer() {
      @Override
      public Map<String, String> parameters() {
        Map<String, String> hello = new java.util.HashMap<>(Map.of(
            RdmaTransport.ENDPOINT, session.pair.endpoint(session.options).encode(),
            RdmaTransport.INGEST_ENDPOINT, session.ingestPair.endpoint(session.ingestOptions).encode(),
            RdmaTransport.MTU, Integer.toString(QueuePair.Mtu.bytes(session.localMtu)),
            RdmaTransport.READS_PER_BATCH, Integer.toString(session.readsPerBatch)));
        if (session.pushes != null) {
          hello.put(RdmaTransport.PUSH_ENDPOINT, session.pushes.endpoint(session.options).encode());
          hello.put(RdmaTransport.PUSH_MESSAGES, Integer.toString(IngestPushes.MESSAGES));
        }
        return Map.copyOf(hello);
      }

      @Override
      public ClientSession accept(Map<String, String> welcome) {
        try {
          int mtu = RdmaTransport.agreedMtu(session.localMtu, welcome);
          session.pair.connect(QueuePair.Endpoint.decode(Transport.requireParameter(welcome, RdmaTransport.ENDPOINT)),
              session.options.withMtu(mtu));
          String ingest = welcome.get(RdmaTransport.INGEST_ENDPOINT);
          if (ingest != null) {
            session.ingestPair.connect(QueuePair.Endpoint.decode(ingest), session.ingestOptions.withMtu(mtu));
            session.ingestConnected = true;
            String pushEndpoint = welcome.get(RdmaTransport.PUSH_ENDPOINT);
            String ring = welcome.get(RdmaTransport.PUSH_RING);
            if (session.pushes != null && pushEndpoint != null && ring != null) {
              session.pushes.connect(QueuePair.Endpoint.decode(pushEndpoint), session.options.withMtu(mtu),
                  PushRing.decode(ring));
            }
          }
          session.completer.start();
          return session;
        } catch (RuntimeException e) {
          session.close();
          throw e;
        }
      }

      @Override
      public void close() {
        session.close();
      }
    };
  }

  /**
   * Posts the batch's read and returns; the body is handed to {@code done} when the read is in. Waits (within the I/O
   * deadline) only when every read slot or receive buffer is taken.
   */
  @Override
  public void fetch(BatchHeader header, Fetched done) {
    try {
      post(header, done);
    } catch (ThallusException e) {
      failed = true;
      done.failed(e);
      return;
    }
    takeCompleted();
  }

  /**
   * Ingested bodies are copied once into registered buffers the server may read (remote read, in this connection's
   * own protection domain) and held until the server has read them, or, as {@link IngestTransfer} says, pushed from
   * such a buffer into the server's ring ({@link IngestPushes}); null from a server without the write direction.
   */
  @Override
  public synchronized IngestPlacer ingestPlacer() {
    if (closed) {
      throw ThallusException.of(StatusCode.UNAVAILABLE, "the rdma session is closed");
    }
    if (!ingestConnected) {
      return null;
    }
    if (placer == null) {
      RegisteredBufferPool buffers = new RegisteredBufferPool(domain, EnumSet.of(MemoryRegion.Access.REMOTE_READ),
          context.receivePoolBytes());
      exposed = buffers;
      placer = IngestPlacer.of(Map.of(), (body, deadline) -> {
        if (pushes != null && transfer.pushes(body.length(), pushes.ringBytes())) {
          return pushes.place(body, buffers, deadline);
        }
        RegisteredBufferPool.Buffer buffer = buffers.tryBorrow(Math.max(body.length(), 8));
        if (buffer == null) {
          return null; // no room until the server has read earlier bodies
        }
        if (pushes != null && pushes.isRingKey(buffer.remoteKey())) {
          // The server would take this body for a pushed one: keys of two hosts' devices can coincide.
          buffer.close();
          throw ThallusException.of(StatusCode.INTERNAL, "a buffer's remote key here equals the server's push ring"
              + " key; ingest with " + IngestTransfer.PROPERTY + "=read on this connection");
        }
        try {
          body.copyTo(buffer.address());
        } catch (RuntimeException e) {
          buffer.close();
          throw e;
        }
        List<io.thallus.spi.BatchPart> parts = body.relocated(buffer.address(), buffer.remoteKey());
        return new PlacedBody() {
          @Override
          public List<io.thallus.spi.BatchPart> parts() {
            return parts;
          }

          @Override
          public void close() {
            buffer.close();
          }
        };
      });
    }
    return placer;
  }

  private void post(BatchHeader header, Fetched done) {
    boolean packed = RdmaTransport.exposedInPlace(header);
    if (packed) {
      checkReadPerBuffer(header);
    }
    BufferDescriptor extent = packed ? null : RdmaTransport.oneRead(header);
    long length = packed ? header.packedLength() : extent.length();
    Deadline deadline = Deadline.after(context.ioTimeout());
    int slot = takeChain(deadline);
    RegisteredBufferPool.Buffer buffer;
    try {
      buffer = receive.borrow(length, deadline);
    } catch (RuntimeException e) {
      giveChain(slot);
      throw e;
    }
    synchronized (this) {
      if (closed) {
        buffer.close();
        freeChains.add(slot);
        throw ThallusException.of(StatusCode.CANCELLED, "the rdma session is closed");
      }
      long sequence = ++reads;
      ReadChain chain = chains[slot];
      chain.clear();
      if (packed) {
        addReadPerBuffer(chain, header, buffer);
      } else {
        chain.add(buffer.address(), buffer.localKey(), extent.address(), extent.key(), (int) extent.length());
      }
      pending.add(new Pending(sequence, header, buffer, packed ? 0 : extent.address(), length, packed, slot, done,
          System.nanoTime()));
      chain.post(sequence);
      notifyAll(); // the completion thread waits for what the control thread does not find complete
    }
  }

  /**
   * Refuses, before anything is taken for it, a batch exposed in place that this client cannot read: more buffers
   * than it said it reads per batch, or a buffer larger than one READ.
   */
  private void checkReadPerBuffer(BatchHeader header) {
    int reads = 0;
    for (io.thallus.spi.BatchPart part : header.parts()) {
      for (BufferDescriptor d : part.buffers()) {
        if (d.length() > Integer.MAX_VALUE) {
          throw ThallusException.of(StatusCode.PROTOCOL_ERROR, "batch " + header.batchId() + " of stream "
              + header.streamId() + " has a buffer of " + d.length() + " bytes, larger than one read");
        }
        reads += d.length() > 0 ? 1 : 0;
      }
    }
    if (reads > readsPerBatch) {
      throw ThallusException.of(StatusCode.PROTOCOL_ERROR, "batch " + header.batchId() + " of stream "
          + header.streamId() + " has " + reads + " buffers to read, more than the " + readsPerBatch
          + " this client said it reads per batch");
    }
  }

  /** One READ per buffer that has bytes, each into its place in a body packed in descriptor order (checked before). */
  private static void addReadPerBuffer(ReadChain chain, BatchHeader header, RegisteredBufferPool.Buffer buffer) {
    long[] offsets = header.packedOffsets();
    int i = 0;
    for (io.thallus.spi.BatchPart part : header.parts()) {
      for (BufferDescriptor d : part.buffers()) {
        long offset = offsets[i++];
        if (d.length() > 0) {
          chain.add(buffer.address() + offset, buffer.localKey(), d.address(), d.key(), (int) d.length());
        }
      }
    }
  }

  /** Hands over whatever has completed, unless the completion thread is polling already (it will see these too). */
  private void takeCompleted() {
    if (!polling.tryLock()) {
      return;
    }
    try {
      if (!isClosed()) {
        handle(completions.poll());
      }
    } catch (ThallusException e) {
      failPending(e);
    } finally {
      polling.unlock();
    }
  }

  private synchronized boolean isClosed() {
    return closed;
  }

  private synchronized int takeChain(Deadline deadline) {
    while (freeChains.isEmpty()) {
      long millis = deadline.remainingMillis();
      if (millis == 0 || closed || failed) {
        throw closed || failed ? ThallusException.of(StatusCode.CANCELLED, "the rdma session is closed")
            : deadline.expired("a free read slot");
      }
      try {
        wait(Math.min(millis, 200));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw ThallusException.of(StatusCode.CANCELLED, "interrupted while waiting for a read slot");
      }
    }
    return freeChains.poll();
  }

  private synchronized void giveChain(int slot) {
    freeChains.add(slot);
    notifyAll();
  }

  /** Waits, event-driven, for the reads the control thread did not find complete. */
  private void completeLoop() {
    try {
      while (true) {
        synchronized (this) {
          while (!closed && pending.isEmpty()) {
            wait(200);
          }
          if (closed) {
            return;
          }
        }
        int taken;
        polling.lock();
        try {
          taken = completions.poll();
          if (taken == 0) {
            taken = completions.armAndPoll();
          }
          handle(taken);
        } finally {
          polling.unlock();
        }
        if (taken == 0 && !completions.sleep(Deadline.after(Duration.ofMillis(200)))) {
          checkOldest();
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ThallusException e) {
      failPending(e);
    } catch (RuntimeException e) {
      failPending(ThallusException.of(StatusCode.INTERNAL, "rdma completion handling failed: " + e, e));
    }
  }

  /** Hands over the {@code n} reads just taken off the completion queue. */
  private void handle(int n) {
    for (int i = 0; i < n; i++) {
      completions.check(i, "reading a batch body");
      complete(completions.workRequestId(i));
    }
  }

  private void complete(long sequence) {
    Pending done;
    synchronized (this) {
      done = pending.peek();
      if (done == null || done.sequence() != sequence) {
        throw ThallusException.of(StatusCode.INTERNAL, "read " + sequence + " completed out of order");
      }
      pending.poll();
      lent++;
    }
    giveChain(done.chain());
    RegisteredBufferPool.Buffer buffer = done.buffer();
    Runnable release = () -> {
      buffer.close();
      returned();
    };
    done.done().body(done.packed() ? FetchedBody.packed(buffer.address(), done.length(), release)
        : FetchedBody.mirrored(buffer.address(), done.length(), done.start(), false, release));
  }

  private synchronized void checkOldest() {
    Pending oldest = pending.peek();
    if (oldest != null && System.nanoTime() - oldest.postedNanos() > context.ioTimeout().toNanos()) {
      throw ThallusException.of(StatusCode.DEADLINE_EXCEEDED, "gave up after " + context.ioTimeout().toMillis()
          + " ms waiting for the body of batch " + oldest.header().batchId() + " of stream "
          + oldest.header().streamId());
    }
  }

  /** The queue pair cannot go on: every read still pending fails (the first failure fails the connection). */
  private void failPending(ThallusException error) {
    List<Pending> waiting;
    synchronized (this) {
      failed = true;
      if (closed) {
        return;
      }
      waiting = List.copyOf(pending);
    }
    for (Pending read : waiting) {
      read.done().failed(error);
    }
  }

  private synchronized void returned() {
    lent--;
    destroyIfIdle();
  }

  /**
   * Closes the connection's verbs resources, but only once no batch the consumer keeps still lives in a registered
   * buffer: deregistering it after the device is gone would touch freed library state.
   */
  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      notifyAll();
    }
    if (completer.isAlive()) {
      try {
        completer.join(TimeUnit.SECONDS.toMillis(10));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    // A control thread still polling finishes first: it polls the completion queue released below.
    polling.lock();
    try {
      tearDown();
    } finally {
      polling.unlock();
    }
  }

  private synchronized void tearDown() {
    // The queue pairs go first, so no read still in flight can land in a buffer given back below.
    pair.close();
    ingestPair.close();
    if (pushes != null) {
      pushes.close();
    }
    for (Pending item : pending) {
      item.buffer().close();
    }
    pending.clear();
    for (ReadChain chain : chains) {
      chain.close();
    }
    tornDown = true;
    destroyIfIdle();
  }

  private void destroyIfIdle() {
    if (tornDown && lent == 0 && !destroyed) {
      destroyed = true;
      receive.close();
      if (exposed != null) {
        exposed.close();
      }
      completions.close();
      ingestCompletions.close();
      domain.close();
      device.close();
    }
  }
}
