package io.thallus.rdma.transport;

import io.netty.buffer.ByteBuf;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.rdma.verbs.CompletionQueue;
import io.thallus.rdma.verbs.MemoryRegion;
import io.thallus.rdma.verbs.ProtectionDomain;
import io.thallus.rdma.verbs.QueuePair;
import io.thallus.rdma.verbs.RdmaDevice;
import io.thallus.rdma.verbs.ReadChain;
import io.thallus.rdma.verbs.RegisteredBufferPool;
import io.thallus.spi.BatchContents;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.BatchLayouts;
import io.thallus.spi.ClientOffer;
import io.thallus.spi.ClientSession;
import io.thallus.spi.Deadline;
import io.thallus.spi.ReleasedBatches;
import io.thallus.spi.Transport;
import java.util.ArrayDeque;
import java.util.EnumSet;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.ForeignAllocation;

/**
 * The rdma transport's client side. Its queue pair exists before HELLO (the offer carries its endpoint) and is
 * connected with the server's from WELCOME. Each BATCH becomes one RDMA READ of the packed body into a registered,
 * pooled receive buffer, posted from the control thread as the message arrives (up to {@value #IN_FLIGHT} at
 * once). Whoever finds reads complete delivers them, with the batches, END and errors between them, in arrival
 * order: the control thread looks right after each post (a read that is already in, as on Soft-RoCE, where the
 * post runs it, or one that finished while the next BATCH was on its way, costs no thread hand-off), and a
 * completion thread waits event-driven for the rest. One of them delivers at a time. The buffer is lent to the
 * batch as its {@code ArrowBuf}s and goes back to the pool when the consumer releases the batch; the server's copy
 * is released as soon as the read is in. Small batches come inline in the BATCH frame instead.
 */
final class RdmaClientSession implements ClientSession {
  /** Reads posted and not yet complete, at most: enough to keep the device busy while the consumer works. */
  private static final int IN_FLIGHT = 8;

  /**
   * What waits for its turn, in arrival order: a batch whose read is posted (or that needed none), or an action
   * (END, a stream's error) that must not overtake the batches before it.
   */
  private record Pending(long sequence, BatchHeader header, RegisteredBufferPool.Buffer buffer, long start,
      long length, int chain, BatchContents ready, Runnable action, long postedNanos) {}

  private final ClientOffer.Context context;
  private final BufferAllocator allocator;
  private final RdmaDevice device;
  private final ProtectionDomain domain;
  private final CompletionQueue completions;
  private final QueuePair pair;
  private final ReadChain[] chains;
  private final ArrayDeque<Integer> freeChains = new ArrayDeque<>();
  private final ArrayDeque<Pending> pending = new ArrayDeque<>();
  /** Held by whoever takes completions and delivers: they leave the queue in order and must be handed over so. */
  private final ReentrantLock delivery = new ReentrantLock();
  private final Thread completer;
  private volatile BatchSink sink;
  private final RegisteredBufferPool receive;
  private final QueuePair.ConnectOptions options;
  private final ReleasedBatches released = new ReleasedBatches();
  private long reads;
  /**
   * Items the completion thread has taken off {@link #pending} and not yet handed over. While one is in hand, an END
   * must queue behind it rather than run at once, or it would overtake the batch.
   */
  private int inHand;
  private volatile boolean failed;
  private int lent;
  private boolean closed;
  /** Set once close() has released the queue pair and what was pending: only then may the verbs objects go. */
  private boolean tornDown;
  private boolean destroyed;

  private RdmaClientSession(ClientOffer.Context context, RdmaDevice device) {
    this.context = context;
    this.allocator = context.allocator();
    this.device = device;
    this.domain = device.allocateProtectionDomain();
    this.completions = device.createCompletionQueue(64);
    this.pair = domain.createQueuePair(completions, new QueuePair.Capacity(IN_FLIGHT * 2, 1));
    this.chains = new ReadChain[IN_FLIGHT];
    for (int i = 0; i < IN_FLIGHT; i++) {
      chains[i] = pair.newReadChain(1);
      freeChains.add(i);
    }
    this.completer = Thread.ofPlatform().name("thallus-client-rdma-completions").daemon()
        .unstarted(this::completeLoop);
    this.receive = new RegisteredBufferPool(domain, EnumSet.of(MemoryRegion.Access.LOCAL_WRITE),
        context.receivePoolBytes());
    this.options = QueuePair.ConnectOptions.forRoce(Math.min(16, device.attributes().maxReadsInFlightAsInitiator()));
  }

  static ClientOffer offer(ClientOffer.Context context) {
    RdmaClientSession session = new RdmaClientSession(context, RdmaDevice.open(RdmaTransport.deviceName()));
    return new ClientOffer() {
      @Override
      public Map<String, String> parameters() {
        return Map.of(RdmaTransport.ENDPOINT, session.pair.endpoint(session.options).encode());
      }

      @Override
      public ClientSession accept(Map<String, String> welcome) {
        try {
          session.pair.connect(QueuePair.Endpoint.decode(Transport.requireParameter(welcome, RdmaTransport.ENDPOINT)),
              session.options);
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
   * Posts the batch's read and returns at once; the completion thread delivers it, in order, when it is in. Waits
   * (within the deadline) only when every read slot or receive buffer is taken.
   */
  @Override
  public void onBatch(BatchHeader header, ByteBuf inline, BatchSink batchSink) {
    this.sink = batchSink;
    try {
      if (inline.isReadable()) {
        deliverInOrder(header, BatchLayouts.fromInline(header, inline, allocator));
      } else {
        post(header);
      }
    } catch (ThallusException e) {
      fail(e);
    }
  }

  private void post(BatchHeader header) {
    BatchLayouts.Span span = BatchLayouts.span(header);
    if (span == null) {
      deliverInOrder(header, BatchLayouts.assemble(header, d -> allocator.getEmpty()));
      return;
    }
    long start = span.start();
    int key = span.key();
    long length = span.length();
    if (length > Integer.MAX_VALUE) {
      throw ThallusException.of(StatusCode.PROTOCOL_ERROR, "batch " + header.batchId() + " body of " + length
          + " bytes is larger than one read");
    }
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
        throw ThallusException.of(StatusCode.CANCELLED, "the rdma session is closed");
      }
      long sequence = ++reads;
      ReadChain chain = chains[slot];
      chain.clear();
      chain.add(buffer.address(), buffer.localKey(), start, key, (int) length);
      pending.add(new Pending(sequence, header, buffer, start, length, slot, null, null, System.nanoTime()));
      chain.post(sequence);
    }
    deliverCompleted();
    synchronized (this) {
      if (!pending.isEmpty()) {
        notifyAll(); // the completion thread waits for the rest
      }
    }
  }

  /** Delivers whatever has completed, unless the completion thread is at it already (it will see these too). */
  private void deliverCompleted() {
    if (!delivery.tryLock()) {
      return;
    }
    try {
      if (isClosed()) {
        return;
      }
      handle(completions.poll());
      deliverReady();
    } finally {
      delivery.unlock();
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

  /**
   * Hands over a batch that needs no read: at once on the control thread when nothing is ahead of it (a hand-off to
   * the completion thread costs a wake-up, which on a one-vCPU guest can be a whole scheduler tick), else behind the
   * reads still in flight.
   */
  private void deliverInOrder(BatchHeader header, BatchContents contents) {
    synchronized (this) {
      if (!pending.isEmpty() || inHand > 0) {
        pending.add(new Pending(-1, header, null, 0, 0, -1, contents, null, System.nanoTime()));
        notifyAll();
        return;
      }
    }
    sink.deliver(header, contents);
  }

  /**
   * Waits for the reads the control thread did not find complete, and delivers them with the actions between them,
   * in arrival order. Completions are taken and delivered under {@link #delivery}; the sleep is outside it.
   */
  private void completeLoop() {
    try {
      while (true) {
        int taken = 0;
        boolean readAhead;
        delivery.lock();
        try {
          deliverReady();
          synchronized (this) {
            if (closed) {
              return;
            }
            readAhead = !pending.isEmpty() && pending.peek().sequence() >= 0;
          }
          if (readAhead) {
            taken = completions.poll();
            if (taken == 0) {
              taken = completions.armAndPoll();
            }
            handle(taken);
          }
        } finally {
          delivery.unlock();
        }
        if (!readAhead) {
          synchronized (this) {
            if (!closed && pending.isEmpty()) {
              wait(200);
            }
          }
        } else if (taken == 0 && !completions.sleep(Deadline.after(java.time.Duration.ofMillis(200)))) {
          checkOldest();
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ThallusException e) {
      fail(e);
    } catch (RuntimeException e) {
      fail(ThallusException.of(StatusCode.INTERNAL, "rdma completion handling failed: " + e, e));
    }
  }

  /** Delivers the {@code n} reads just taken off the completion queue, and the actions queued between them. */
  private void handle(int n) {
    for (int i = 0; i < n; i++) {
      completions.check(i, "reading a batch body");
      deliverReady(); // an END or inline batch that arrived between two reads goes out between them
      complete(completions.workRequestId(i));
    }
  }

  /** Runs the actions and delivers the ready batches at the head of the line. */
  private void deliverReady() {
    while (true) {
      Pending head;
      synchronized (this) {
        head = pending.peek();
        if (head == null || head.sequence() >= 0) {
          return;
        }
        pending.poll();
        inHand++;
      }
      try {
        if (head.action() != null) {
          head.action().run();
        } else {
          sink.deliver(head.header(), head.ready());
        }
      } finally {
        handedOver();
      }
    }
  }

  private synchronized void handedOver() {
    inHand--;
  }

  private void complete(long sequence) {
    Pending done;
    synchronized (this) {
      done = pending.peek();
      if (done == null || done.sequence() != sequence) {
        throw ThallusException.of(StatusCode.INTERNAL, "read " + sequence + " completed out of order");
      }
      pending.poll();
      inHand++;
    }
    try {
      deliverRead(done);
    } finally {
      handedOver();
    }
  }

  private void deliverRead(Pending done) {
    giveChain(done.chain());
    RegisteredBufferPool.Buffer buffer = done.buffer();
    ArrowBuf body;
    try {
      body = allocator.wrapForeignAllocation(new ForeignAllocation(done.length(), buffer.address()) {
        @Override
        protected void release0() {
          buffer.close();
          returned();
        }
      });
      synchronized (this) {
        lent++;
      }
    } catch (RuntimeException e) {
      buffer.close();
      throw e;
    }
    BatchContents contents;
    long first = done.start();
    try (body) {
      contents = BatchLayouts.assemble(done.header(), d -> body.slice(d.address() - first, d.length()));
    }
    released.add(done.header().streamId(), done.header().batchId(), sink);
    sink.deliver(done.header(), contents);
  }

  private synchronized void checkOldest() {
    Pending oldest = pending.peek();
    if (oldest != null && oldest.sequence() >= 0
        && System.nanoTime() - oldest.postedNanos() > context.ioTimeout().toNanos()) {
      throw ThallusException.of(StatusCode.DEADLINE_EXCEEDED, "gave up after " + context.ioTimeout().toMillis()
          + " ms waiting for the body of batch " + oldest.header().batchId() + " of stream "
          + oldest.header().streamId());
    }
  }

  private void fail(ThallusException error) {
    failed = true;
    BatchSink target = sink;
    if (target != null && !closed) {
      target.fail(error);
    }
  }

  @Override
  public void afterPendingBatches(Runnable action) {
    synchronized (this) {
      if (!pending.isEmpty() || inHand > 0) {
        pending.add(new Pending(-1, null, null, 0, 0, -1, null, action, System.nanoTime()));
        notifyAll();
        return;
      }
    }
    action.run();
  }

  @Override
  public long[] takeReleases(int streamId) {
    return released.take(streamId);
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
        completer.join(java.util.concurrent.TimeUnit.SECONDS.toMillis(10));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    // A control thread still delivering finishes first: it polls the completion queue released below.
    delivery.lock();
    try {
      tearDown();
    } finally {
      delivery.unlock();
    }
  }

  private synchronized void tearDown() {
    // The queue pair goes first, so no read still in flight can land in a buffer given back below.
    pair.close();
    for (Pending item : pending) {
      if (item.buffer() != null) {
        item.buffer().close();
      }
      if (item.ready() != null) {
        item.ready().close();
      }
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
      completions.close();
      domain.close();
      device.close();
    }
  }
}
