package io.thallus.flightsql;

import io.grpc.Metadata;
import io.grpc.Status;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightRuntimeException;

/** Thallus's status model as Flight status codes: the same problem gets the same code on either door. */
final class FlightErrors {
  /**
   * The trailer a transaction the engine aborted carries, with the SQLSTATE the JDBC driver gives it (40001): a Java
   * Flight client, which reads gRPC's ABORTED as {@code INTERNAL}, finds it in the status's metadata.
   */
  static final Metadata.Key<String> SQLSTATE = Metadata.Key.of("sqlstate", Metadata.ASCII_STRING_MARSHALLER);
  static final String SERIALIZATION_FAILURE = "40001";

  private FlightErrors() {}

  /** The Flight code of each Thallus code; {@link #of} sends ABORTED as gRPC's own ABORTED instead. */
  static CallStatus status(StatusCode code) {
    return switch (code) {
      case OK, UNKNOWN, PROTOCOL_ERROR -> CallStatus.UNKNOWN;
      case CANCELLED -> CallStatus.CANCELLED;
      // Flight's codes have no OUT_OF_RANGE: the request asked for more than one answer holds.
      case INVALID_ARGUMENT, FAILED_PRECONDITION, OUT_OF_RANGE -> CallStatus.INVALID_ARGUMENT;
      // What Arrow's Java Flight client reads gRPC's ABORTED as (Flight's codes have no ABORTED).
      case ABORTED -> CallStatus.INTERNAL;
      case DEADLINE_EXCEEDED -> CallStatus.TIMED_OUT;
      case NOT_FOUND -> CallStatus.NOT_FOUND;
      case ALREADY_EXISTS -> CallStatus.ALREADY_EXISTS;
      case PERMISSION_DENIED -> CallStatus.UNAUTHORIZED;
      case RESOURCE_EXHAUSTED -> CallStatus.RESOURCE_EXHAUSTED;
      case UNIMPLEMENTED -> CallStatus.UNIMPLEMENTED;
      case INTERNAL -> CallStatus.INTERNAL;
      case UNAVAILABLE -> CallStatus.UNAVAILABLE;
      case UNAUTHENTICATED -> CallStatus.UNAUTHENTICATED;
    };
  }

  /**
   * Any failure of a call as the exception Flight sends: Thallus's code and message kept. Flight's status codes have
   * no ABORTED, so a transaction the engine aborted (a write conflict) goes out as gRPC's ABORTED, which Flight's
   * server passes through as it is: clients and retry logic tell it from bad SQL ({@code INVALID_ARGUMENT}).
   */
  static RuntimeException of(Throwable failure) {
    if (failure instanceof FlightRuntimeException flight) {
      return flight;
    }
    if (failure instanceof ThallusException thallus) {
      if (thallus.code() == StatusCode.ABORTED) {
        return aborted(thallus);
      }
      return status(thallus.code()).withDescription(thallus.getMessage()).withCause(thallus).toRuntimeException();
    }
    if (failure instanceof org.apache.arrow.memory.OutOfMemoryException) {
      return CallStatus.RESOURCE_EXHAUSTED.withDescription("the Flight SQL server's Arrow memory is used up: "
          + failure.getMessage()).withCause(failure).toRuntimeException();
    }
    if (failure instanceof IllegalArgumentException) {
      return CallStatus.INVALID_ARGUMENT.withDescription(failure.getMessage()).withCause(failure).toRuntimeException();
    }
    return CallStatus.INTERNAL.withDescription(String.valueOf(failure.getMessage())).withCause(failure)
        .toRuntimeException();
  }

  /** gRPC's ABORTED with the engine's message and SQLSTATE 40001 in a trailer: roll back and retry the transaction. */
  private static io.grpc.StatusRuntimeException aborted(ThallusException failure) {
    Metadata trailers = new Metadata();
    trailers.put(SQLSTATE, SERIALIZATION_FAILURE);
    return Status.ABORTED.withDescription(failure.getMessage()).withCause(failure).asRuntimeException(trailers);
  }

  static FlightRuntimeException invalid(String message) {
    return CallStatus.INVALID_ARGUMENT.withDescription(message).toRuntimeException();
  }

  static FlightRuntimeException unsupported(String what) {
    return CallStatus.UNIMPLEMENTED.withDescription(what + " is not supported by the Thallus Flight SQL server")
        .toRuntimeException();
  }
}
