package io.thallus.exchange;

import java.util.List;

/**
 * A reducer could not read map outputs from a peer endpoint: the peer is down, or no longer has them. Names the
 * peer, the shuffle, the partition and the map ids, so the caller (Spark: a {@code FetchFailedException}) can have
 * exactly those maps run again.
 */
public final class ShuffleFetchException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final EndpointAddress peer;
  private final int shuffleId;
  private final int partition;
  private final List<Long> mapIds;

  public ShuffleFetchException(EndpointAddress peer, int shuffleId, int partition, List<Long> mapIds,
      Throwable cause) {
    super("cannot read maps " + mapIds + " of shuffle " + shuffleId + ", partition " + partition + " from endpoint "
        + peer + ": " + (cause == null ? "unknown" : cause.getMessage()), cause);
    this.peer = peer;
    this.shuffleId = shuffleId;
    this.partition = partition;
    this.mapIds = List.copyOf(mapIds);
  }

  public EndpointAddress peer() {
    return peer;
  }

  public int shuffleId() {
    return shuffleId;
  }

  public int partition() {
    return partition;
  }

  public List<Long> mapIds() {
    return mapIds;
  }
}
