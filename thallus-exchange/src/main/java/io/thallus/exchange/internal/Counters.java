package io.thallus.exchange.internal;

import java.util.concurrent.atomic.AtomicLong;

/** An endpoint's running counts (see {@code ExchangeStats}). */
public final class Counters {
  public final AtomicLong pullRequests = new AtomicLong();
  public final AtomicLong pulledBatches = new AtomicLong();
  public final AtomicLong pulledBytes = new AtomicLong();
  public final AtomicLong pushedBatchesRead = new AtomicLong();
  public final AtomicLong pushes = new AtomicLong();
  public final AtomicLong pushedBytes = new AtomicLong();
  public final AtomicLong pushesRefused = new AtomicLong();
  public final AtomicLong pushesReceived = new AtomicLong();
  public final AtomicLong pushFramesReceived = new AtomicLong();
}
