package io.thallus.exchange;

import java.util.LinkedHashSet;
import java.util.List;

/**
 * A reducer could not read map outputs from a peer endpoint: the peer is down, or no longer has them. Names the
 * peer, the shuffle, the partitions (one, or a reduce task's range) and the map ids, so the caller (Spark: a
 * {@code FetchFailedException}) can have exactly those maps run again.
 */
public final class ShuffleFetchException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final EndpointAddress peer;
  private final int shuffleId;
  private final List<Integer> partitions;
  private final List<Long> mapIds;

  public ShuffleFetchException(EndpointAddress peer, int shuffleId, int partition, List<Long> mapIds,
      Throwable cause) {
    this(peer, shuffleId, List.of(partition), mapIds, cause);
  }

  /** A failed read of several partitions: {@code mapIds} are the maps of any of them, each once, in first order. */
  public ShuffleFetchException(EndpointAddress peer, int shuffleId, List<Integer> partitions, List<Long> mapIds,
      Throwable cause) {
    super("cannot read maps " + List.copyOf(new LinkedHashSet<>(mapIds)) + " of shuffle " + shuffleId
        + (partitions.size() == 1 ? ", partition " + partitions.get(0) : ", partitions " + partitions)
        + " from endpoint " + peer + ": " + (cause == null ? "unknown" : cause.getMessage()), cause);
    if (partitions.isEmpty()) {
      throw new IllegalArgumentException("a fetch failure names no partition");
    }
    this.peer = peer;
    this.shuffleId = shuffleId;
    this.partitions = List.copyOf(partitions);
    this.mapIds = List.copyOf(new LinkedHashSet<>(mapIds));
  }

  public EndpointAddress peer() {
    return peer;
  }

  public int shuffleId() {
    return shuffleId;
  }

  /** The first (lowest) partition the failed read named. */
  public int partition() {
    return partitions.get(0);
  }

  /** Every partition the failed read named, ascending. */
  public List<Integer> partitions() {
    return partitions;
  }

  public List<Long> mapIds() {
    return mapIds;
  }
}
