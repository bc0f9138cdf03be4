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
import io.thallus.spi.BatchPart;
import io.thallus.spi.BufferDescriptor;
import io.thallus.spi.ClientOffer;
import io.thallus.spi.ClientSession;
import io.thallus.spi.Deadline;
import io.thallus.spi.Transport;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.ForeignAllocation;

/**
 * The rdma transport's client side. Its queue pair exists before HELLO (the offer carries its endpoint) and is
 * connected with the server's from WELCOME. Each BATCH becomes one RDMA READ of the packed body into a registered,
 * pooled receive buffer, awaited event-driven; the buffer is lent to the batch as its {@code ArrowBuf}s and goes
 * back to the pool when the consumer releases the batch. The server's copy is released as soon as the read is in.
 * Reads run on the control thread in arrival order.
 */
final class RdmaClientSession implements ClientSession {
  private final ClientOffer.Context context;
  private final BufferAllocator allocator;
  private final RdmaDevice device;
  private final ProtectionDomain domain;
  private final CompletionQueue completions;
  private final QueuePair pair;
  private final ReadChain chain;
  private final RegisteredBufferPool receive;
  private final QueuePair.ConnectOptions options;
  private final Map<Integer, Queue<Long>> releases = new ConcurrentHashMap<>();
  private long reads;
  private int lent;
  private boolean closed;
  private boolean destroyed;

  private RdmaClientSession(ClientOffer.Context context, RdmaDevice device) {
    this.context = context;
    this.allocator = context.allocator();
    this.device = device;
    this.domain = device.allocateProtectionDomain();
    this.completions = device.createCompletionQueue(64);
    this.pair = domain.createQueuePair(completions, new QueuePair.Capacity(16, 1));
    this.chain = pair.newReadChain(1);
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

  @Override
  public synchronized void onBatch(BatchHeader header, ByteBuf inline, BatchSink sink) {
    BatchContents contents;
    try {
      contents = read(header);
    } catch (ThallusException e) {
      sink.fail(e);
      return;
    }
    releases.computeIfAbsent(header.streamId(), id -> new ConcurrentLinkedQueue<>()).add(header.batchId());
    sink.releasePending(header.streamId());
    sink.deliver(header, contents);
  }

  private BatchContents read(BatchHeader header) {
    if (closed) {
      throw ThallusException.of(StatusCode.CANCELLED, "the rdma session is closed");
    }
    List<BufferDescriptor> all = new ArrayList<>();
    for (BatchPart part : header.parts()) {
      all.addAll(part.buffers());
    }
    if (all.isEmpty() || all.stream().allMatch(d -> d.length() == 0)) {
      return BatchLayouts.assemble(header, d -> allocator.getEmpty());
    }
    long start = Long.MAX_VALUE;
    long end = 0;
    int key = all.getFirst().key();
    for (BufferDescriptor d : all) {
      if (d.key() != key) {
        throw ThallusException.of(StatusCode.PROTOCOL_ERROR, "batch " + header.batchId() + " spans remote keys");
      }
      start = Math.min(start, d.address());
      end = Math.max(end, d.address() + d.length());
    }
    long length = end - start;
    if (length > Integer.MAX_VALUE) {
      throw ThallusException.of(StatusCode.PROTOCOL_ERROR, "batch " + header.batchId() + " body of " + length
          + " bytes is larger than one read");
    }
    Deadline deadline = Deadline.after(context.ioTimeout());
    RegisteredBufferPool.Buffer buffer = receive.borrow(length, deadline);
    ArrowBuf body;
    try {
      chain.clear();
      chain.add(buffer.address(), buffer.localKey(), start, key, (int) length);
      chain.post(++reads);
      completions.await(deadline, "the body of batch " + header.batchId() + " of stream " + header.streamId());
      completions.check(0, "reading batch " + header.batchId() + " of stream " + header.streamId());
      body = allocator.wrapForeignAllocation(new ForeignAllocation(length, buffer.address()) {
        @Override
        protected void release0() {
          buffer.close();
          returned();
        }
      });
      lent++;
    } catch (RuntimeException e) {
      buffer.close();
      throw e;
    }
    long first = start;
    try (body) {
      return BatchLayouts.assemble(header, d -> body.slice(d.address() - first, d.length()));
    }
  }

  @Override
  public long[] takeReleases(int streamId) {
    Queue<Long> waiting = releases.get(streamId);
    if (waiting == null || waiting.isEmpty()) {
      return NO_RELEASES;
    }
    List<Long> ids = new ArrayList<>();
    Long id;
    while ((id = waiting.poll()) != null) {
      ids.add(id);
    }
    return ids.stream().mapToLong(Long::longValue).toArray();
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
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    chain.close();
    pair.close();
    destroyIfIdle();
  }

  private void destroyIfIdle() {
    if (closed && lent == 0 && !destroyed) {
      destroyed = true;
      receive.close();
      completions.close();
      domain.close();
      device.close();
    }
  }
}
