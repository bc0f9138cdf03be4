package io.thallus;

import java.util.Objects;

/**
 * An immutable status: a {@link StatusCode}, a message for people, and optionally the local cause.
 * Only the code and the message cross the wire.
 */
public final class Status {
  private final StatusCode code;
  private final String description;
  private final Throwable cause;

  private Status(StatusCode code, String description, Throwable cause) {
    this.code = Objects.requireNonNull(code, "code");
    this.description = description == null ? "" : description;
    this.cause = cause;
  }

  public static Status of(StatusCode code) {
    return new Status(code, "", null);
  }

  public static Status of(StatusCode code, String description) {
    return new Status(code, description, null);
  }

  public Status withDescription(String newDescription) {
    return new Status(code, newDescription, cause);
  }

  public Status withCause(Throwable newCause) {
    return new Status(code, description, newCause);
  }

  public StatusCode code() {
    return code;
  }

  public String description() {
    return description;
  }

  public Throwable cause() {
    return cause;
  }

  public ThallusException toException() {
    return new ThallusException(this);
  }

  @Override
  public String toString() {
    return description.isEmpty() ? code.name() : code + ": " + description;
  }
}
