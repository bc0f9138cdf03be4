package io.thallus.rdma.transport;

import io.netty.buffer.Unpooled;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.rdma.verbs.CompletionQueue;
import io.thallus.rdma.verbs.MemoryRegion;
import io.thallus.rdma.verbs.ProtectionDomain;
import io.thallus.rdma.verbs.QueuePair;
import io.thallus.rdma.verbs.RdmaDevice;
import io.thallus.rdma.verbs.RegisteredBufferPool;
import io.thallus.spi.BatchContents;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.BatchLayouts;
import io.thallus.spi.ControlWriter;
import io.thallus.spi.Deadline;
import io.thallus.spi.ServerSession;
import io.thallus.spi.ServerTransport;
import io.thallus.spi.Transport;
import java.net.InetSocketAddress;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.Map;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.ForeignAllocation;
import org.apache.arrow.memory.util.MemoryUtil;

/**
 * The rdma transport's server side: one device per server; per client a protection domain of its own, a queue pair
 * and a pool of registered, page-aligned, remote-read-only buffers. Each batch is packed into one pool buffer (one
 * copy, no registration on the data path once the pool is warm) and stays there until the client releases it.
 * Because the domain is the client's own, its keys work only through its own queue pair: no client can read
 * another's batches, whatever descriptor it sends.
 */
final class RdmaServer implements ServerTransport {
  private final Context context;
  private final RdmaDevice device;
  private final CompletionQueue completions;
  private final QueuePair.ConnectOptions options;

  private RdmaServer(Context context, RdmaDevice device) {
    this.context = context;
    this.device = device;
    this.completions = device.createCompletionQueue(64);
    this.options = QueuePair.ConnectOptions.forRoce(Math.min(16, device.attributes().maxReadsInFlightAsTarget()));
  }

  static ServerTransport start(Context context) {
    if (!RdmaDevice.isSupported() || RdmaDevice.deviceNames().isEmpty()) {
      return new Unavailable("no RDMA device on the server");
    }
    return new RdmaServer(context, RdmaDevice.open(RdmaTransport.deviceName()));
  }

  @Override
  public ServerSession accept(InetSocketAddress client, Map<String, String> offer) {
    QueuePair.Endpoint remote = QueuePair.Endpoint.decode(Transport.requireParameter(offer, RdmaTransport.ENDPOINT));
    ProtectionDomain domain = device.allocateProtectionDomain();
    QueuePair pair = null;
    try {
      pair = domain.createQueuePair(completions, new QueuePair.Capacity(16, 1));
      pair.connect(remote, options);
      return new Session(domain, pair, new RegisteredBufferPool(domain, EnumSet.of(MemoryRegion.Access.REMOTE_READ),
          context.memoryPerClient()));
    } catch (RuntimeException e) {
      if (pair != null) {
        pair.close();
      }
      domain.close();
      throw e;
    }
  }

  @Override
  public void close() {
    completions.close();
    device.close();
  }

  private record BatchKey(int streamId, long batchId) {}

  /** A batch the client may still read, and its entry in the server allocator's accounting. */
  private record Held(RegisteredBufferPool.Buffer buffer, ArrowBuf accounted) {
    void release() {
      accounted.close();
      buffer.close();
    }
  }

  /** One client's domain, queue pair, registered buffers, and the batches it may still read. */
  private final class Session implements ServerSession {
    private final ProtectionDomain domain;
    private final QueuePair pair;
    private final RegisteredBufferPool exposed;
    private final Map<BatchKey, Held> held = new HashMap<>();
    private boolean closed;

    Session(ProtectionDomain domain, QueuePair pair, RegisteredBufferPool exposed) {
      this.domain = domain;
      this.pair = pair;
      this.exposed = exposed;
    }

    @Override
    public Map<String, String> welcomeParameters() {
      return Map.of(RdmaTransport.ENDPOINT, pair.endpoint(options).encode());
    }

    @Override
    public void send(int streamId, long batchId, BatchContents contents, ControlWriter control, Deadline deadline) {
      BatchHeader header;
      try (contents) {
        BatchLayouts.PackedBody body = BatchLayouts.pack(contents, 0);
        if (body.length() <= BatchLayouts.INLINE_MAX) {
          // A small batch costs less in the BATCH frame than as an RDMA READ, and holds no registered memory.
          control.writeBatch(new BatchHeader(streamId, batchId, body.parts()), BatchLayouts.copyInline(body),
              () -> {});
          return;
        }
        RegisteredBufferPool.Buffer buffer = exposed.borrow(Math.max(body.length(), 8), deadline);
        try {
          for (int i = 0; i < body.buffers().size(); i++) {
            ArrowBuf source = body.buffers().get(i);
            long length = source.readableBytes();
            if (length > 0) {
              MemoryUtil.copyMemory(source.memoryAddress(), buffer.address() + body.offsets().get(i), length);
            }
          }
          header = new BatchHeader(streamId, batchId,
              BatchLayouts.relocate(body.parts(), buffer.address(), buffer.remoteKey()));
          hold(new BatchKey(streamId, batchId), buffer);
        } catch (RuntimeException e) {
          buffer.close();
          throw e;
        }
      }
      control.writeBatch(header, Unpooled.EMPTY_BUFFER, () -> {});
    }

    /** Keeps the buffer for the client, accounted by the server's allocator while it is held. */
    private synchronized void hold(BatchKey key, RegisteredBufferPool.Buffer buffer) {
      if (closed) {
        throw ThallusException.of(StatusCode.UNAVAILABLE, "the client's rdma session is closed");
      }
      ArrowBuf accounted = context.allocator().wrapForeignAllocation(
          new ForeignAllocation(buffer.size(), buffer.address()) {
            @Override
            protected void release0() {
              // The pool owns the memory; this ends only the allocator's accounting.
            }
          });
      held.put(key, new Held(buffer, accounted));
    }

    @Override
    public synchronized void released(int streamId, long batchId) {
      Held batch = held.remove(new BatchKey(streamId, batchId));
      if (batch != null) {
        batch.release();
      }
    }

    @Override
    public synchronized void close() {
      if (closed) {
        return;
      }
      closed = true;
      // The queue pair goes first: once it is gone no read of this client can reach the buffers returned below.
      pair.close();
      held.values().forEach(Held::release);
      held.clear();
      exposed.close();
      domain.close();
    }
  }

  /** Where the server has no device: every client is told so, and picks another transport. */
  private record Unavailable(String reason) implements ServerTransport {
    @Override
    public ServerSession accept(InetSocketAddress client, Map<String, String> offer) {
      throw ThallusException.of(StatusCode.UNAVAILABLE, reason);
    }

    @Override
    public void close() {}
  }
}
