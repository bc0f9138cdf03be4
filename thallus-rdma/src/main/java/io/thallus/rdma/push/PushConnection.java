package io.thallus.rdma.push;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.rdma.verbs.CompletionQueue;
import io.thallus.rdma.verbs.MemoryRegion;
import io.thallus.rdma.verbs.ProtectionDomain;
import io.thallus.rdma.verbs.QueuePair;
import io.thallus.rdma.verbs.ReceiveSlots;
import io.thallus.rdma.verbs.SendChain;
import io.thallus.spi.Deadline;
import java.util.Set;

/**
 * One side of a push channel's queue pair: its own completion queue, receives kept posted (zero-byte slots: both
 * directions carry their notifications as immediate values), a one-request send chain rewritten per post, and the
 * send queue's accounting. Requests are signalled every {@code signalEvery}-th post (or when the caller needs to
 * know): an unsignalled request holds its send-queue slot until a later signalled one completes, so posts stop
 * when the queue is full and the next signalled completion frees the slots before it. The first failed completion
 * breaks the connection: every later call throws it again, named, instead of waiting on a queue pair in error.
 */
final class PushConnection implements AutoCloseable {
  /**
   * What the owner learns from {@link #drain}: a receive (its slot is already posted again; {@code write}: a WRITE
   * with immediate consumed it, otherwise a SEND did). Sends done show in {@link #completed}.
   */
  interface Events {
    void received(boolean write, int byteLength, boolean hasImmediate, int immediate);
  }

  private final CompletionQueue completions;
  private final QueuePair pair;
  private final ReceiveSlots receives;
  private final SendChain chain;
  private final int sendDepth;
  private final int signalEvery;
  private final String role;
  // One poll's receives, copied out (a poll returns at most CompletionQueue's batch, 32): no allocation per poll.
  private final int[] lengths = new int[64];
  private final int[] immediates = new int[64];
  private final boolean[] withImmediate = new boolean[64];
  private final boolean[] writes = new boolean[64];
  private long posted;
  private long completed;
  private long lastSignalled;
  private ThallusException failure;
  private boolean closed;

  PushConnection(ProtectionDomain domain, int sendDepth, int receiveDepth, String role) {
    this.sendDepth = sendDepth;
    this.signalEvery = Math.max(1, sendDepth / 4);
    this.role = role;
    CompletionQueue queue = domain.device().createCompletionQueue(sendDepth + receiveDepth + 16);
    QueuePair created = null;
    ReceiveSlots slots = null;
    try {
      created = domain.createQueuePair(queue, new QueuePair.Capacity(sendDepth, 1, receiveDepth));
      slots = created.newReceiveSlots(receiveDepth);
      this.chain = created.newSendChain(1);
    } catch (RuntimeException e) {
      if (slots != null) {
        slots.close();
      }
      if (created != null) {
        created.close();
      }
      queue.close();
      throw e;
    }
    this.completions = queue;
    this.pair = created;
    this.receives = slots;
  }

  QueuePair.Endpoint endpoint(QueuePair.ConnectOptions options) {
    return pair.endpoint(options);
  }

  /** Connects and posts every receive: the peer may send from the moment it is connected itself. */
  void connect(QueuePair.Endpoint remote, QueuePair.ConnectOptions options, Set<MemoryRegion.Access> peerAccess) {
    checkUsable();
    pair.connect(remote, options, peerAccess);
    receives.postAll();
  }

  long posted() {
    return posted;
  }

  long completed() {
    return completed;
  }

  /** Whether a request can be posted now without overrunning the send queue. */
  boolean hasSendRoom() {
    return posted - completed < sendDepth;
  }

  /** Posts a WRITE with immediate of local registered bytes into the peer's memory; returns its number (1, 2, ...). */
  long postWriteWithImmediate(long localAddress, int localKey, int length, long remoteAddress, int remoteKey,
      int immediate, boolean signal) {
    beforePost();
    chain.writeWithImmediate(localAddress, localKey, length, remoteAddress, remoteKey, immediate);
    return afterBuild(signal);
  }

  /** Posts a WRITE of no bytes, signalled: its completion reports every request before it. */
  long postEmptyWrite(long remoteAddress, int remoteKey) {
    beforePost();
    chain.write(0, 0, 0, remoteAddress, remoteKey);
    return afterBuild(true);
  }

  /** Posts a SEND of no bytes carrying {@code immediate}: a notification. */
  long postNotification(int immediate, boolean signal) {
    beforePost();
    chain.sendWithImmediate(0, 0, 0, immediate);
    return afterBuild(signal);
  }

  private void beforePost() {
    checkUsable();
    if (!hasSendRoom()) {
      throw new IllegalStateException("the send queue is full: " + sendDepth + " requests");
    }
    chain.clear();
  }

  /**
   * Posts the built request, signalled if {@code signal} or if it is the {@code signalEvery}-th since the last
   * signalled one.
   */
  private long afterBuild(boolean signal) {
    long number = posted + 1;
    boolean signalled = signal || number - lastSignalled >= signalEvery;
    try {
      chain.post(number, signalled);
    } catch (ThallusException e) {
      throw fail(e);
    }
    posted = number;
    if (signalled) {
      lastSignalled = number;
    }
    return number;
  }

  /** The last request is signalled, or posted unsignalled (a later signalled one will report both). */
  boolean lastPostSignalled() {
    return lastSignalled == posted;
  }

  /** Takes what has completed, without waiting; returns how many completions were handled. */
  int drain(Events events) {
    checkUsable();
    int n = completions.poll();
    handle(n, events);
    return n;
  }

  /** Waits, event-driven, until at least one completion comes or the deadline passes, and handles them. */
  void await(Deadline deadline, String what, Events events) {
    checkUsable();
    // A deadline that passes leaves the connection as it was: the caller may wait again.
    handle(completions.await(deadline, role + ": " + what), events);
  }

  private void handle(int n, Events events) {
    // Copy everything first: the handlers may post, and a later poll reuses the queue's batch.
    long sendsThrough = completed;
    int received = 0;
    ThallusException failed = null;
    for (int i = 0; i < n; i++) {
      long id = completions.workRequestId(i);
      if (completions.status(i) != 0) {
        try {
          completions.check(i, role + (ReceiveSlots.isReceive(id) ? " receive" : " send " + id));
        } catch (ThallusException e) {
          failed = failed == null ? e : failed;
        }
        continue;
      }
      if (ReceiveSlots.isReceive(id)) {
        try {
          receives.post(ReceiveSlots.slotOf(id));
        } catch (ThallusException e) {
          failed = failed == null ? e : failed;
          continue;
        }
        lengths[received] = completions.byteLength(i);
        withImmediate[received] = completions.hasImmediate(i);
        writes[received] = completions.isWriteWithImmediate(i);
        immediates[received] = withImmediate[received] ? completions.immediate(i) : 0;
        received++;
      } else {
        sendsThrough = Math.max(sendsThrough, id);
      }
    }
    if (failed != null) {
      throw fail(failed);
    }
    completed = sendsThrough;
    try {
      for (int i = 0; i < received; i++) {
        events.received(writes[i], lengths[i], withImmediate[i], immediates[i]);
      }
    } catch (ThallusException e) {
      throw fail(e); // the peer broke the protocol: this connection is done
    }
  }

  private ThallusException fail(ThallusException e) {
    if (failure == null) {
      failure = e;
    }
    return e;
  }

  /** Throws the failure that broke this connection, if one did. */
  void checkUsable() {
    if (closed) {
      throw ThallusException.of(StatusCode.FAILED_PRECONDITION, role + " is closed");
    }
    if (failure != null) {
      throw ThallusException.of(failure.code(), role + " failed earlier: " + failure.getMessage(), failure);
    }
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    // The queue pair first: it stops the device touching the chain's and the slots' native memory.
    pair.close();
    chain.close();
    receives.close();
    completions.close();
  }
}
