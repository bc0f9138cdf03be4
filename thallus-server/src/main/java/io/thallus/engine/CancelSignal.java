package io.thallus.engine;

import java.util.ArrayList;
import java.util.List;

/**
 * Tells an engine that its query should stop, even while {@link QueryEngine#execute} is still compiling or running
 * it (an aggregate runs to the end before its schema is sent). Thread-safe.
 */
public final class CancelSignal {
  private final List<Runnable> actions = new ArrayList<>();
  private boolean cancelled;

  /** Runs {@code action} on cancellation, or at once if the query was cancelled already. */
  public void onCancel(Runnable action) {
    synchronized (this) {
      if (!cancelled) {
        actions.add(action);
        return;
      }
    }
    action.run();
  }

  public void cancel() {
    List<Runnable> toRun;
    synchronized (this) {
      if (cancelled) {
        return;
      }
      cancelled = true;
      toRun = List.copyOf(actions);
      actions.clear();
    }
    toRun.forEach(Runnable::run);
  }

  public synchronized boolean isCancelled() {
    return cancelled;
  }
}
