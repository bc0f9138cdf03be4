package io.thallus.exchange.internal;

import io.thallus.IngestMode;
import io.thallus.IngestRequest;
import io.thallus.ThallusClient;
import io.thallus.ThallusIngest;
import io.thallus.exchange.EndpointAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The endpoint's one network thread for pushes: it sends each queued push (one Thallus ingest whose batch carries
 * one or more partitions' rows, the header in its schema), in the order the maps queued them, and tracks their
 * completions. A push the peer refuses (its buffer is full, it is gone) marks that map to that peer as not pushed:
 * its later pushes there are dropped and the reducer pulls it. Map tasks never wait for it: a full queue also
 * marks the map not pushed.
 */
public final class PushSender implements AutoCloseable {
  /** One push: the header, the schema, and the batches in the header's run order (owned by the queue). */
  public record Push(EndpointAddress peer, ExchangeRequests.PushHeader header, Schema schema,
      List<ArrowRecordBatch> batches) {
    void free() {
      batches.forEach(ArrowRecordBatch::close);
    }
  }

  private record MapAtPeer(EndpointAddress peer, int shuffleId, long mapId) {}

  private static final Logger LOG = LoggerFactory.getLogger(PushSender.class);
  private static final int QUEUE = 1024;

  private final PeerClients peers;
  private final BufferAllocator allocator;
  private final Duration timeout;
  private final Counters counters;
  private final BlockingQueue<Push> queue = new ArrayBlockingQueue<>(QUEUE);
  private final Set<MapAtPeer> notPushed = ConcurrentHashMap.newKeySet();
  private final Thread thread;
  private final Object idle = new Object();
  private int outstanding;
  private volatile boolean closed;

  public PushSender(PeerClients peers, BufferAllocator allocator, Duration timeout, Counters counters, String name) {
    this.peers = peers;
    this.allocator = allocator;
    this.timeout = timeout;
    this.counters = counters;
    this.thread = Thread.ofPlatform().daemon().name(name).start(this::run);
  }

  /** Whether map {@code mapId}'s pushes to {@code peer} stopped (the reducer will pull it). */
  public boolean stopped(EndpointAddress peer, int shuffleId, long mapId) {
    return notPushed.contains(new MapAtPeer(peer, shuffleId, mapId));
  }

  /** Queues a push, or drops it (and stops that map's pushes to that peer) when the queue is full or closed. */
  public void submit(Push push) {
    MapAtPeer key = new MapAtPeer(push.peer(), push.header().shuffleId(), push.header().mapId());
    if (closed || notPushed.contains(key)) {
      push.free();
      return;
    }
    synchronized (idle) {
      outstanding++;
    }
    if (!queue.offer(push)) {
      notPushed.add(key);
      push.free();
      done();
    }
  }

  /** Waits until every queued push is sent or refused; answers false at the deadline. */
  public boolean awaitIdle(Duration atMost) throws InterruptedException {
    long deadline = System.nanoTime() + atMost.toNanos();
    synchronized (idle) {
      while (outstanding > 0) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        TimeUnit.NANOSECONDS.timedWait(idle, left);
      }
    }
    return true;
  }

  /** Forgets the shuffle's maps that stopped pushing. */
  public void forget(int shuffleId) {
    notPushed.removeIf(key -> key.shuffleId() == shuffleId);
  }

  private void run() {
    while (!closed) {
      Push push;
      try {
        push = queue.poll(100, TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        return;
      }
      if (push == null) {
        continue;
      }
      try {
        send(push);
      } finally {
        push.free();
        done();
      }
    }
  }

  private void send(Push push) {
    ExchangeRequests.PushHeader header = push.header();
    MapAtPeer key = new MapAtPeer(push.peer(), header.shuffleId(), header.mapId());
    if (notPushed.contains(key)) {
      return;
    }
    ThallusClient client = null;
    try {
      client = peers.client(push.peer());
      Schema withHeader = new Schema(push.schema().getFields(),
          Map.of(ExchangeRequests.PUSH_HEADER_KEY, ExchangeRequests.encode(header)));
      IngestRequest request = IngestRequest.builder(ExchangeRequests.PUSH_TABLE).mode(IngestMode.APPEND)
          .timeout(timeout).build();
      // The root carries the header too: an ingest takes only batches of its own schema, metadata included.
      List<org.apache.arrow.vector.FieldVector> vectors = push.schema().getFields().stream()
          .map(field -> field.createVector(allocator)).toList();
      try (VectorSchemaRoot root = new VectorSchemaRoot(withHeader, vectors, 0);
           ThallusIngest ingest = client.ingest(request, withHeader)) {
        if (push.batches().stream().anyMatch(Batches::isCompressed)) {
          // Kept compressed: each batch goes as it is (joining would decompress and compress again); the peer
          // decompresses and checks each as it arrives, and its runs may span batches.
          for (ArrowRecordBatch batch : push.batches()) {
            ingest.write(batch);
          }
        } else if (!push.batches().isEmpty()) {
          try (ArrowRecordBatch joined = push.batches().size() == 1 ? Batches.retain(push.batches().get(0))
              : Batches.join(push.schema(), push.batches(), allocator, allocator)) {
            new VectorLoader(root).load(joined);
          }
          ingest.write(root);
        }
        ingest.finish();
      }
      counters.pushes.incrementAndGet();
      counters.pushedBytes.addAndGet(header.bytes());
    } catch (RuntimeException refused) {
      notPushed.add(key);
      counters.pushesRefused.incrementAndGet();
      LOG.debug("push {} to {} refused; the reducer will pull it: {}", header, push.peer(), refused.getMessage());
      if (client != null && !client.isConnected()) {
        peers.forget(push.peer(), client);
      }
    }
  }

  private void done() {
    synchronized (idle) {
      outstanding--;
      idle.notifyAll();
    }
  }

  @Override
  public void close() {
    closed = true;
    thread.interrupt();
    try {
      thread.join(timeout.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    Push left;
    while ((left = queue.poll()) != null) {
      left.free();
      done();
    }
  }
}
