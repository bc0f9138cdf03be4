package io.thallus.exchange.internal;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The batches other endpoints pushed here, by shuffle and map, until a reducer here takes them. A map's pushes to
 * this endpoint count only once all of them arrived in sequence, the last one flagged: a reducer takes a map's rows
 * from here only then, and pulls them from the map's endpoint otherwise, so each row is read exactly once.
 */
public final class PushedStore implements AutoCloseable {
  /** A pushed batch and the credits it holds. */
  private record Held(ArrowRecordBatch batch, long bytes, PushCredits credits) {
    void free() {
      batch.close();
      credits.release(bytes);
    }
  }

  private static final class PushedMap {
    Schema schema;
    int nextSequence;
    boolean complete;
    boolean broken;
    final Map<Integer, List<Held>> partitions = new HashMap<>();
    final Set<Integer> taken = new HashSet<>();
    /** The partitions the map's pushes here cover (its header's runs, empty ones too): others are pulled. */
    final Set<Integer> covered = new HashSet<>();

    void free() {
      partitions.values().forEach(list -> list.forEach(Held::free));
      partitions.clear();
    }
  }

  /** At most this many removed shuffle ids are remembered (to refuse late pushes for them). */
  private static final int REMOVED_REMEMBERED = 4096;

  private final Map<Integer, Map<Long, PushedMap>> shuffles = new HashMap<>();
  private final Set<Integer> removed = java.util.Collections.newSetFromMap(new LinkedHashMap<>() {
    @Override
    protected boolean removeEldestEntry(Map.Entry<Integer, Boolean> eldest) {
      return size() > REMOVED_REMEMBERED;
    }
  });
  private boolean closed;

  /** Fails with FAILED_PRECONDITION when {@code shuffleId} was removed here (a late or stray push). */
  public synchronized void checkAccepting(int shuffleId) {
    if (closed) {
      throw ThallusException.of(StatusCode.UNAVAILABLE, "the exchange endpoint is closing");
    }
    if (removed.contains(shuffleId)) {
      throw ThallusException.of(StatusCode.FAILED_PRECONDITION, "shuffle " + shuffleId
          + " was removed on this endpoint; it takes no pushes for it");
    }
  }

  /**
   * Keeps one push's batches ({@code byPartition}, owned from now on, each charged to {@code credits}). A push out of
   * sequence breaks its map here (its earlier pushes are dropped and the reducer pulls it); answers whether the push
   * was kept.
   */
  public synchronized boolean accept(ExchangeRequests.PushHeader header, Schema schema,
      Map<Integer, List<ArrowRecordBatch>> byPartition, PushCredits credits) {
    List<Held> held = new ArrayList<>();
    Map<Integer, List<Held>> incoming = new LinkedHashMap<>();
    byPartition.forEach((partition, batches) -> {
      for (ArrowRecordBatch batch : batches) {
        Held h = new Held(batch, Batches.bytes(batch), credits);
        held.add(h);
        incoming.computeIfAbsent(partition, p -> new ArrayList<>()).add(h);
      }
    });
    if (closed || removed.contains(header.shuffleId())) {
      held.forEach(Held::free);
      return false;
    }
    PushedMap map = shuffles.computeIfAbsent(header.shuffleId(), id -> new HashMap<>())
        .computeIfAbsent(header.mapId(), id -> new PushedMap());
    if (map.broken || map.complete || header.sequence() != map.nextSequence
        || (map.schema != null && !map.schema.equals(schema))) {
      map.broken = true;
      map.complete = false;
      map.free();
      held.forEach(Held::free);
      return false;
    }
    map.schema = schema;
    incoming.forEach((partition, list) -> {
      if (map.taken.contains(partition)) {
        // Its reducer came first and pulled this map: these rows are read already.
        list.forEach(Held::free);
      } else {
        map.partitions.computeIfAbsent(partition, p -> new ArrayList<>()).addAll(list);
      }
    });
    for (int partition : header.partitions()) {
      map.covered.add(partition);
    }
    map.nextSequence++;
    map.complete = header.last();
    return true;
  }

  /**
   * The rows map {@code mapId} pushed here for {@code partition}, taken (the caller owns them and their credits come
   * back), or null when they are not all here (the caller pulls them) or were taken before.
   */
  public synchronized List<ArrowRecordBatch> take(int shuffleId, int partition, long mapId) {
    Map<Long, PushedMap> maps = shuffles.get(shuffleId);
    PushedMap map = maps == null ? null : maps.get(mapId);
    if (map == null || !map.complete || !map.covered.contains(partition) || !map.taken.add(partition)) {
      return null;
    }
    List<Held> held = map.partitions.remove(partition);
    List<ArrowRecordBatch> batches = new ArrayList<>();
    if (held != null) {
      for (Held h : held) {
        h.credits.release(h.bytes);
        batches.add(h.batch);
      }
    }
    return batches;
  }

  /**
   * Notes that a reducer here pulls map {@code mapId}'s rows of {@code partition} (they were not all pushed yet):
   * what was pushed of them, and what arrives later, is freed instead of kept.
   */
  public synchronized void pulled(int shuffleId, int partition, long mapId) {
    if (closed || removed.contains(shuffleId)) {
      return;
    }
    PushedMap map = shuffles.computeIfAbsent(shuffleId, id -> new HashMap<>()).computeIfAbsent(mapId,
        id -> new PushedMap());
    if (map.taken.add(partition)) {
      List<Held> held = map.partitions.remove(partition);
      if (held != null) {
        held.forEach(Held::free);
      }
    }
  }

  /** The schema map {@code mapId} pushed with, if it pushed here completely. */
  public synchronized Schema schema(int shuffleId, long mapId) {
    Map<Long, PushedMap> maps = shuffles.get(shuffleId);
    PushedMap map = maps == null ? null : maps.get(mapId);
    return map == null || !map.complete ? null : map.schema;
  }

  /**
   * Gives up on map {@code mapId}'s pushes here (one was refused or broke off): what came before is freed at once,
   * so its credits return, and the reducer pulls the map.
   */
  public synchronized void abandon(int shuffleId, long mapId) {
    if (closed || removed.contains(shuffleId)) {
      return;
    }
    PushedMap map = shuffles.computeIfAbsent(shuffleId, id -> new HashMap<>()).computeIfAbsent(mapId,
        id -> new PushedMap());
    map.broken = true;
    map.complete = false;
    map.free();
  }

  /** Drops what was pushed for {@code shuffleId} and refuses later pushes for it. */
  public synchronized void remove(int shuffleId) {
    removed.add(shuffleId);
    Map<Long, PushedMap> maps = shuffles.remove(shuffleId);
    if (maps != null) {
      maps.values().forEach(PushedMap::free);
    }
  }

  /** Bytes of pushed batches held here now, waiting for their reducers. */
  public synchronized long heldBytes() {
    long bytes = 0;
    for (Map<Long, PushedMap> maps : shuffles.values()) {
      for (PushedMap map : maps.values()) {
        for (List<Held> list : map.partitions.values()) {
          for (Held held : list) {
            bytes += held.bytes;
          }
        }
      }
    }
    return bytes;
  }

  /** Batches held here now, for tests and statistics. */
  public synchronized int heldBatches() {
    int count = 0;
    for (Map<Long, PushedMap> maps : shuffles.values()) {
      for (PushedMap map : maps.values()) {
        for (List<Held> list : map.partitions.values()) {
          count += list.size();
        }
      }
    }
    return count;
  }

  @Override
  public synchronized void close() {
    closed = true;
    shuffles.values().forEach(maps -> maps.values().forEach(PushedMap::free));
    shuffles.clear();
  }
}
