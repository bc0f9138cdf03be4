package io.thallus.internal.server;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.engine.EngineSession;
import io.thallus.internal.batch.BatchSender;
import io.thallus.spi.IngestFetcher;
import io.thallus.spi.ServerSession;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What one authenticated connection's streams and ingests work with: its memory (an allocator inside its credential's
 * budget), the transport session and the sender of its batches, its outbox, its lane onto the engine threads, its
 * engine session, and what the server shares. Made by the handshake once WELCOME is due; it knows nothing of the
 * handlers and streams that use it. {@link #close} frees it all, once, when the connection has gone and its last
 * stream and ingest are done.
 */
public final class ServerConnection implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ServerConnection.class);
  /** The name of each connection's allocator starts so. */
  public static final String ALLOCATOR_PREFIX = "connection-";

  private final long id;
  private final ServerContext context;
  private final String transportName;
  private final boolean serializes;
  private final BufferAllocator allocator;
  private final String budgetCredential;
  private final ServerSession session;
  private final BatchSender sender;
  private final Outbox outbox;
  private final EngineLane lane;
  // Guarded by this.
  private boolean closed;
  /** close() was called while holds were out: the connection closes when the last one is released. */
  private boolean closeWanted;
  /**
   * Work that still runs in this connection's engine session and memory after its stream has finished (a producer
   * thread the engine did not stop within the I/O timeout): while any is out, close() waits for its release.
   */
  private int holds;
  /** This client's session in the engine, opened at its first query. */
  private EngineSession engineSession;
  /** The write direction's fetcher, made at the first ingested body that travels outside its frame. */
  private IngestFetcher ingestFetcher;
  private Map<String, String> ingestParameters = Map.of();

  /**
   * {@code allocator} lies in the budget of {@code budgetCredential} (null: the server's own), which this connection
   * gives back when it closes; {@code sender} writes through {@code outbox}.
   */
  ServerConnection(long id, ServerContext context, String transportName, boolean serializes,
      BufferAllocator allocator, String budgetCredential, ServerSession session, BatchSender sender, Outbox outbox,
      EngineLane lane) {
    this.id = id;
    this.context = context;
    this.transportName = transportName;
    this.serializes = serializes;
    this.allocator = allocator;
    this.budgetCredential = budgetCredential;
    this.session = session;
    this.sender = sender;
    this.outbox = outbox;
    this.lane = lane;
  }

  long id() {
    return id;
  }

  /** What every connection of the server shares: limits, timeouts, budgets, metrics, timers. */
  ServerContext context() {
    return context;
  }

  /** The chosen transport's name, for metrics. */
  String transportName() {
    return transportName;
  }

  /** Whether the chosen transport carries every batch serialized inside its frame (ipc). */
  boolean serializes() {
    return serializes;
  }

  /**
   * Holds what this connection's streams produce and its ingests receive; it outlives them while the client holds
   * batches.
   */
  BufferAllocator allocator() {
    return allocator;
  }

  /** Sends the batches of this connection's streams. */
  BatchSender sender() {
    return sender;
  }

  Outbox outbox() {
    return outbox;
  }

  /** Where this connection's steps run: through its credential's lane, shared with its other connections. */
  EngineLane lane() {
    return lane;
  }

  /**
   * Gives back the memory the transport keeps for this connection without a body in it (shm's empty segments), for a
   * stream of this connection that waits for room; the bytes given back.
   */
  long releaseUnusedTransportMemory() {
    return session.releaseUnused();
  }

  /** The name of the budget this connection's memory lies in, for errors. */
  String budgetName() {
    return context.budgets().budgetName(allocator);
  }

  /** This client's engine session (its transaction, temp tables, settings), opened at the first query. */
  synchronized EngineSession engineSession() {
    throwIfClosed();
    if (engineSession == null) {
      engineSession = context.engine().openSession();
    }
    return engineSession;
  }

  /** The transport parameters of the write direction, as the client's latest INGEST named them. */
  synchronized void ingestParameters(Map<String, String> parameters) {
    ingestParameters = Map.copyOf(parameters);
  }

  /** The write direction's fetcher for this connection, made once. */
  synchronized IngestFetcher ingestFetcher() {
    throwIfClosed();
    if (ingestFetcher == null) {
      ingestFetcher = session.ingestFetcher(ingestParameters);
    }
    return ingestFetcher;
  }

  private void throwIfClosed() {
    if (closed) {
      throw ThallusException.of(StatusCode.UNAVAILABLE, "the connection has closed");
    }
  }

  /**
   * Keeps the engine session and memory open past {@link #close} until {@link #releaseHold}: taken by a stream for
   * work that may outlive it (a batch still being made on a producer thread), so nothing is closed under it.
   */
  synchronized void hold() {
    holds++;
  }

  /** Gives a {@link #hold} back; the last one out closes the connection if close() was called meanwhile. */
  void releaseHold() {
    synchronized (this) {
      if (holds <= 0) {
        throw new IllegalStateException("connection " + id + ": a hold released that was never taken");
      }
      holds--;
      if (holds > 0 || !closeWanted) {
        return;
      }
    }
    closeNow();
  }

  /**
   * The client has gone and nothing runs for it any more: a transaction it left open rolls back, the transport lets
   * go of what it held, and the memory closes after the frames still queued for the event loop. While a
   * {@link #hold} is out that waits for its release. Idempotent.
   */
  @Override
  public void close() {
    synchronized (this) {
      if (closeWanted) {
        return;
      }
      closeWanted = true;
      if (holds > 0) {
        return;
      }
    }
    closeNow();
  }

  private void closeNow() {
    EngineSession ended;
    IngestFetcher fetcher;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      ended = engineSession;
      fetcher = ingestFetcher;
    }
    try {
      if (ended != null) {
        ended.close();
      }
      if (fetcher != null) {
        fetcher.close();
      }
      sender.close();
    } finally {
      // Frames a stream queued just before it ended may still wait on the event loop, holding this memory until
      // they are written or dropped: it closes after them, on the same loop.
      outbox.thenOnLoop(() -> closeMemory(allocator, budgetCredential, id, context));
    }
  }

  /** Closes a connection's memory and gives its share of the credential's budget back. */
  static void closeMemory(BufferAllocator allocator, String budgetCredential, long id, ServerContext context) {
    try {
      allocator.close();
    } catch (IllegalStateException leak) {
      LOG.error("connection {} leaked memory: {}", id, leak.getMessage());
    } finally {
      context.budgets().giveBack(budgetCredential);
    }
  }
}
