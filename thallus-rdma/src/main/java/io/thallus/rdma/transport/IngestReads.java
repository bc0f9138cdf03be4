package io.thallus.rdma.transport;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.rdma.verbs.CompletionQueue;
import io.thallus.rdma.verbs.QueuePair;
import io.thallus.rdma.verbs.ReadChain;
import io.thallus.rdma.verbs.RegisteredBufferPool;
import io.thallus.spi.BatchHeader;
import io.thallus.spi.BodyFetcher;
import io.thallus.spi.BufferDescriptor;
import io.thallus.spi.Deadline;
import io.thallus.spi.FetchedBody;
import io.thallus.spi.IngestFetcher;
import java.time.Duration;

/**
 * The server's side of rdma's write direction: each ingested body is pulled with one RDMA READ of the client's
 * registered buffer into a pooled, registered receive buffer of the client's budget, which core turns into the batch.
 * The read runs as the BATCH arrives, on the control connection's thread, and is waited for there (within the I/O
 * deadline), as cma's reads are: one read at a time per connection; the client's buffer is free once it is in. A
 * body the client pushed into the connection's ring instead ({@link IngestTransfer#WRITE}; the BATCH names the
 * ring's key) is taken from there ({@link IngestRing}) into a buffer of the same pool.
 */
final class IngestReads implements IngestFetcher {
  private final QueuePair pair;
  private final CompletionQueue completions;
  private final RegisteredBufferPool receive;
  private final Duration ioTimeout;
  private final ReadChain chain;
  /** The ring the client pushes bodies into; null where it asked for none. */
  private final IngestRing ring;
  private long reads;
  private boolean closed;

  IngestReads(QueuePair pair, CompletionQueue completions, RegisteredBufferPool receive, Duration ioTimeout,
      IngestRing ring) {
    this.ring = ring;
    this.pair = pair;
    this.completions = completions;
    this.receive = receive;
    this.ioTimeout = ioTimeout;
    this.chain = pair.newReadChain(1);
  }

  @Override
  public void fetch(BatchHeader header, Fetched done) {
    BodyFetcher.now(done, () -> read(header));
  }

  private synchronized FetchedBody read(BatchHeader header) {
    if (closed) {
      throw ThallusException.of(StatusCode.CANCELLED, "the rdma session is closed");
    }
    BufferDescriptor extent = RdmaTransport.oneRead(header);
    if (ring != null && ring.holds(extent)) {
      return ring.take(header, extent, receive, Deadline.after(ioTimeout));
    }
    RegisteredBufferPool.Buffer buffer = receive.tryBorrow(extent.length());
    if (buffer == null) {
      throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, "no registered memory left in the client's budget "
          + "for an ingested body of " + extent.length() + " bytes");
    }
    try {
      long id = ++reads;
      chain.clear();
      chain.add(buffer.address(), buffer.localKey(), extent.address(), extent.key(), (int) extent.length());
      chain.post(id);
      Deadline deadline = Deadline.after(ioTimeout);
      boolean done = false;
      while (!done) {
        int n = completions.await(deadline, "reading the body of ingested batch " + header.batchId());
        for (int i = 0; i < n; i++) {
          completions.check(i, "reading the body of ingested batch " + header.batchId());
          done |= completions.workRequestId(i) == id;
        }
      }
      return FetchedBody.mirrored(buffer.address(), extent.length(), extent.address(), false, buffer::close);
    } catch (RuntimeException e) {
      buffer.close();
      throw e;
    }
  }

  /** Called after the queue pair is closed: no read can land in a buffer from here on. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    chain.close();
    receive.close();
  }
}
