package io.thallus.internal.client;

import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The batch ids the consumer has released and the server not yet been told of, per stream. Thread-safe: releases
 * happen on whatever thread closes a batch.
 */
final class ReleasedBatches {
  static final long[] NONE = new long[0];

  private final Map<Integer, Queue<Long>> waiting = new ConcurrentHashMap<>();

  void add(int streamId, long batchId) {
    waiting.computeIfAbsent(streamId, id -> new ConcurrentLinkedQueue<>()).add(batchId);
  }

  /** The ids recorded for the stream since the last call. */
  long[] take(int streamId) {
    Queue<Long> ids = waiting.get(streamId);
    if (ids == null || ids.isEmpty()) {
      return NONE;
    }
    long[] taken = new long[ids.size()];
    int n = 0;
    Long id;
    while ((id = ids.poll()) != null) {
      if (n == taken.length) {
        taken = java.util.Arrays.copyOf(taken, n * 2);
      }
      taken[n++] = id;
    }
    if (ids.isEmpty()) {
      waiting.remove(streamId, ids);
    }
    return n == taken.length ? taken : java.util.Arrays.copyOf(taken, n);
  }
}
