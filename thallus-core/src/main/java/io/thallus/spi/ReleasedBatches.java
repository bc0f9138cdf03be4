package io.thallus.spi;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The batch ids a client has released and not yet reported, per stream: what a {@link ClientSession} for a
 * transport that reads server memory hands back from {@link ClientSession#takeReleases}. Thread-safe: releases
 * happen on whatever thread closes a batch.
 */
public final class ReleasedBatches {
  private final Map<Integer, Queue<Long>> waiting = new ConcurrentHashMap<>();

  /** Records a release and asks {@code sink} to send it if the stream will grant no more credits. */
  public void add(int streamId, long batchId, ClientSession.BatchSink sink) {
    waiting.computeIfAbsent(streamId, id -> new ConcurrentLinkedQueue<>()).add(batchId);
    sink.releasePending(streamId);
  }

  /** The ids recorded for the stream since the last call. */
  public long[] take(int streamId) {
    Queue<Long> ids = waiting.get(streamId);
    if (ids == null || ids.isEmpty()) {
      return ClientSession.NO_RELEASES;
    }
    List<Long> taken = new ArrayList<>();
    Long id;
    while ((id = ids.poll()) != null) {
      taken.add(id);
    }
    return taken.stream().mapToLong(Long::longValue).toArray();
  }
}
