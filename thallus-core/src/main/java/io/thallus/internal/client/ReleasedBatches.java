package io.thallus.internal.client;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The batch ids the consumer has released and the server not yet been told of, per stream. Thread-safe: releases
 * happen on whatever thread closes a batch. Adding and taking both run inside the map's per-key compute, so an id
 * added while a stream's list is taken lands either in what is taken or in a new list, never in one already dropped.
 */
final class ReleasedBatches {
  static final long[] NONE = new long[0];

  private final Map<Integer, List<Long>> waiting = new ConcurrentHashMap<>();

  void add(int streamId, long batchId) {
    waiting.compute(streamId, (id, ids) -> {
      List<Long> list = ids == null ? new ArrayList<>() : ids;
      list.add(batchId);
      return list;
    });
  }

  /** The ids recorded for the stream since the last call; the stream's entry goes with them. */
  long[] take(int streamId) {
    long[][] taken = {NONE};
    waiting.computeIfPresent(streamId, (id, ids) -> {
      taken[0] = ids.stream().mapToLong(Long::longValue).toArray();
      return null;
    });
    return taken[0];
  }
}
