package io.thallus;

/**
 * The one exception Thallus throws: every failure, local or reported by the peer, carries a {@link Status}.
 * JDBC and Spark translate it at their boundaries (SQLState, task failure).
 */
public final class ThallusException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final transient Status status;

  public ThallusException(Status status) {
    super(status.toString(), status.cause());
    this.status = status;
  }

  public Status status() {
    return status;
  }

  public StatusCode code() {
    return status.code();
  }

  /** Shorthand for {@code Status.of(code, message).toException()}. */
  public static ThallusException of(StatusCode code, String message) {
    return Status.of(code, message).toException();
  }

  /** Shorthand for {@code Status.of(code, message).withCause(cause).toException()}. */
  public static ThallusException of(StatusCode code, String message, Throwable cause) {
    return Status.of(code, message).withCause(cause).toException();
  }
}
