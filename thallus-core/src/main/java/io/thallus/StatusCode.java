package io.thallus;

/**
 * What went wrong, as one code on the wire and in Java. The numbers are the wire values and never change.
 * The codes follow gRPC's where the meaning is the same, so people who know Arrow Flight read them at once.
 */
public enum StatusCode {
  OK(0),
  /** The stream was cancelled by the client, or the server is shutting down. */
  CANCELLED(1),
  UNKNOWN(2),
  /** The request itself is wrong: bad SQL, a bad option value, an unusable dataset. */
  INVALID_ARGUMENT(3),
  /** A wait ran past its deadline. */
  DEADLINE_EXCEEDED(4),
  /** A dataset, stream or transport that does not exist. */
  NOT_FOUND(5),
  /** What a request would create exists already: a table an ingest in create mode names. */
  ALREADY_EXISTS(6),
  /** A path outside the data root, or an action the server does not allow. */
  PERMISSION_DENIED(7),
  /** A memory budget, buffer pool or stream limit is used up. */
  RESOURCE_EXHAUSTED(8),
  /** The request came in the wrong state, e.g. OPEN before HELLO. */
  FAILED_PRECONDITION(9),
  /**
   * The answer would be larger than the protocol lets one answer be: a description of more parts than
   * {@link DatasetDescription#MAX_PARTS}. Not a shortage: asking again gives the same answer.
   */
  OUT_OF_RANGE(11),
  /**
   * The transaction was aborted: it conflicted with another one (write-write conflict) or failed earlier and must
   * be rolled back. Retrying the whole transaction may succeed.
   */
  ABORTED(10),
  /** A protocol version or feature this side does not speak. */
  UNIMPLEMENTED(12),
  /** A bug or broken invariant on the side that reports it. */
  INTERNAL(13),
  /** The peer is gone or cannot be reached: connection refused, reset, closed mid-stream. */
  UNAVAILABLE(14),
  /** Credentials missing or wrong. */
  UNAUTHENTICATED(16),
  /** Bytes that are not a valid Thallus frame: bad length, unknown message type, truncated fields. */
  PROTOCOL_ERROR(20);

  private final int wireValue;

  StatusCode(int wireValue) {
    this.wireValue = wireValue;
  }

  /** The byte that stands for this code on the wire. */
  public int wireValue() {
    return wireValue;
  }

  /** The code for a wire value; an unknown value (from a newer peer) reads as {@link #UNKNOWN}. */
  public static StatusCode fromWireValue(int value) {
    for (StatusCode code : values()) {
      if (code.wireValue == value) {
        return code;
      }
    }
    return UNKNOWN;
  }
}
