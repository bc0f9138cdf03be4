package io.thallus.internal.transport.cma;

import io.netty.buffer.Unpooled;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.internal.transport.Hosts;
import io.thallus.spi.BatchContents;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.BatchLayouts;
import io.thallus.spi.BatchPart;
import io.thallus.spi.BufferDescriptor;
import io.thallus.spi.ControlWriter;
import io.thallus.spi.Deadline;
import io.thallus.spi.ServerSession;
import io.thallus.spi.ServerTransport;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.arrow.memory.ArrowBuf;

/**
 * The cma transport's server side. It copies nothing: a batch's descriptors are the addresses of its own buffers,
 * and the batch is kept alive until the client says it has read it. A small probe buffer with a random token lets
 * each client prove at the handshake that the kernel lets it read this process.
 */
final class CmaServer implements ServerTransport {
  private final Context context;
  // The probe lives as long as the transport, outside the allocator that accounts batch memory.
  private final Arena probeArena = Arena.ofShared();
  private final MemorySegment probe;
  private final String token;

  CmaServer(Context context) {
    this.context = context;
    byte[] bytes = new byte[16];
    new SecureRandom().nextBytes(bytes);
    this.token = HexFormat.of().formatHex(bytes);
    this.probe = probeArena.allocate(bytes.length);
    MemorySegment.copy(MemorySegment.ofArray(bytes), 0, probe, 0, bytes.length);
  }

  @Override
  public ServerSession accept(InetSocketAddress client, Map<String, String> offer) {
    if (!Hosts.isLocal(client.getAddress())) {
      throw ThallusException.of(StatusCode.UNAVAILABLE, "cma needs the client on the server's host");
    }
    return new Session();
  }

  @Override
  public void close() {
    probeArena.close();
  }

  private record BatchKey(int streamId, long batchId) {}

  private record Held(BatchContents contents, long bytes) {}

  /** One client's batches, held from BATCH until the client releases them. */
  private final class Session implements ServerSession {
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition released = lock.newCondition();
    private final Map<BatchKey, Held> held = new HashMap<>();
    private long heldBytes;
    private boolean closed;

    @Override
    public Map<String, String> welcomeParameters() {
      return Map.of(CmaTransport.PID, Long.toString(ProcessHandle.current().pid()),
          CmaTransport.PROBE_ADDRESS, Long.toString(probe.address()), CmaTransport.PROBE_TOKEN, token);
    }

    @Override
    public void send(int streamId, long batchId, BatchContents contents, ControlWriter control, Deadline deadline) {
      BatchHeader header;
      try {
        BatchLayouts.PackedBody body = BatchLayouts.pack(contents, 0);
        List<BatchPart> parts = new ArrayList<>(body.parts().size());
        int index = 0;
        for (BatchPart part : body.parts()) {
          List<BufferDescriptor> buffers = new ArrayList<>(part.buffers().size());
          for (BufferDescriptor buffer : part.buffers()) {
            ArrowBuf source = body.buffers().get(index++);
            buffers.add(new BufferDescriptor(buffer.length() == 0 ? 0 : source.memoryAddress(), buffer.length(), 0));
          }
          parts.add(new BatchPart(part.dictionaryId(), part.delta(), part.length(), part.nodes(), buffers));
        }
        header = new BatchHeader(streamId, batchId, parts);
        hold(new BatchKey(streamId, batchId), contents, body.length(), deadline);
      } catch (RuntimeException e) {
        contents.close();
        throw e;
      }
      control.writeBatch(header, Unpooled.EMPTY_BUFFER, () -> {});
    }

    private void hold(BatchKey key, BatchContents contents, long bytes, Deadline deadline) {
      lock.lock();
      try {
        while (heldBytes > 0 && heldBytes + bytes > context.memoryPerClient()) {
          if (closed) {
            throw ThallusException.of(StatusCode.UNAVAILABLE, "the client's session is closed");
          }
          long left = deadline.remainingNanos();
          if (left == 0) {
            throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, "the client has not released " + held.size()
                + " batches (" + heldBytes + " bytes) and the limit per client is " + context.memoryPerClient()
                + " bytes");
          }
          released.awaitNanos(Math.min(left, TimeUnit.MILLISECONDS.toNanos(200)));
        }
        held.put(key, new Held(contents, bytes));
        heldBytes += bytes;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw ThallusException.of(StatusCode.CANCELLED, "interrupted while waiting for the client's releases");
      } finally {
        lock.unlock();
      }
    }

    @Override
    public void released(int streamId, long batchId) {
      Held batch;
      lock.lock();
      try {
        batch = held.remove(new BatchKey(streamId, batchId));
        if (batch != null) {
          heldBytes -= batch.bytes();
          released.signalAll();
        }
      } finally {
        lock.unlock();
      }
      if (batch != null) {
        batch.contents().close();
      }
    }

    @Override
    public void close() {
      List<Held> toFree;
      lock.lock();
      try {
        closed = true;
        toFree = new ArrayList<>(held.values());
        held.clear();
        heldBytes = 0;
        released.signalAll();
      } finally {
        lock.unlock();
      }
      toFree.forEach(batch -> batch.contents().close());
    }
  }
}
