package io.thallus.internal.server;

import java.util.ArrayDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * A way onto the server's engine threads for one connection, or for all the connections of one credential: at most
 * {@code width} of its steps run at once, the rest wait here in order, holding no thread. So a client whose streams
 * block (a full socket, a spent budget) occupies {@code width} threads at most, and the others keep being served.
 * Lanes nest: a connection's lane runs its steps through its credential's lane (an {@link Executor}), so a step
 * runs only when both have room.
 *
 * <p>A step still waiting (here or in the lane it runs through) can be {@linkplain #withdraw withdrawn}: a stream
 * cancelled while queued behind its credential's other statements is answered at once, not when its turn comes.
 */
final class EngineLane implements Executor {
  private final Executor engineThreads;
  private final int width;
  private final ArrayDeque<Runnable> waiting = new ArrayDeque<>();
  private int running;

  EngineLane(Executor engineThreads, int width) {
    this.engineThreads = engineThreads;
    this.width = width;
  }

  void submit(Runnable step) {
    synchronized (this) {
      if (running >= width) {
        waiting.add(step);
        return;
      }
      running++;
    }
    dispatch(step);
  }

  @Override
  public void execute(Runnable step) {
    submit(step);
  }

  /** Whether a step of this lane (or of the lane it runs through) waits for a thread: a running step makes way. */
  boolean hasWaiting() {
    synchronized (this) {
      if (!waiting.isEmpty()) {
        return true;
      }
    }
    return engineThreads instanceof EngineLane outer && outer.hasWaiting();
  }

  /**
   * Takes {@code step} out of the queue if it still waits, here or in the lane this one runs through; it will then
   * not run here, and its place (the slot it held in this lane while waiting in the outer one) goes to the next.
   * False if it is not waiting (it runs, has run, or was never submitted): the caller must let it run.
   */
  boolean withdraw(Runnable step) {
    synchronized (this) {
      if (waiting.remove(step)) {
        return true;
      }
    }
    return engineThreads instanceof EngineLane outer && outer.withdrawDispatched(this, step);
  }

  /** Takes out the waiting step that {@code inner} dispatched for {@code step}, and frees inner's slot for it. */
  private boolean withdrawDispatched(EngineLane inner, Runnable step) {
    boolean removed;
    synchronized (this) {
      removed = waiting.removeIf(waitingStep -> waitingStep instanceof Dispatched dispatched
          && dispatched.lane() == inner && dispatched.step() == step);
    }
    if (removed) {
      inner.stepDone();
    }
    return removed;
  }

  /** Whether no step runs or waits here. */
  synchronized boolean isIdle() {
    return running == 0 && waiting.isEmpty();
  }

  synchronized int waitingCount() {
    return waiting.size();
  }

  private void dispatch(Runnable step) {
    try {
      engineThreads.execute(new Dispatched(this, step));
    } catch (RejectedExecutionException shuttingDown) {
      // The pool is closing: a step that only finishes a stream must still run, so it runs here.
      runThenNext(step);
    }
  }

  private void runThenNext(Runnable step) {
    try {
      step.run();
    } finally {
      stepDone();
    }
  }

  /** A step has run (or been withdrawn): the next waiting one takes its slot. */
  private void stepDone() {
    Runnable next;
    synchronized (this) {
      next = waiting.poll();
      if (next == null) {
        running--;
      }
    }
    if (next != null) {
      dispatch(next);
    }
  }

  /** A step of {@code lane} handed to the executor it runs through; named, so that it can be withdrawn there. */
  private record Dispatched(EngineLane lane, Runnable step) implements Runnable {
    @Override
    public void run() {
      lane.runThenNext(step);
    }
  }
}
