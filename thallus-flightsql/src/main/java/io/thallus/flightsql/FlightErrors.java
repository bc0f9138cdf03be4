package io.thallus.flightsql;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightRuntimeException;

/** Thallus's status model as Flight status codes: the same problem gets the same code on either door. */
final class FlightErrors {
  private FlightErrors() {}

  static CallStatus status(StatusCode code) {
    return switch (code) {
      case OK, UNKNOWN, PROTOCOL_ERROR -> CallStatus.UNKNOWN;
      case CANCELLED -> CallStatus.CANCELLED;
      case INVALID_ARGUMENT, FAILED_PRECONDITION, ABORTED -> CallStatus.INVALID_ARGUMENT;
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

  /** Any failure of a call as the exception Flight sends: Thallus's code and message kept. */
  static FlightRuntimeException of(Throwable failure) {
    if (failure instanceof FlightRuntimeException flight) {
      return flight;
    }
    if (failure instanceof ThallusException thallus) {
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

  static FlightRuntimeException invalid(String message) {
    return CallStatus.INVALID_ARGUMENT.withDescription(message).toRuntimeException();
  }

  static FlightRuntimeException unsupported(String what) {
    return CallStatus.UNIMPLEMENTED.withDescription(what + " is not supported by the Thallus Flight SQL server")
        .toRuntimeException();
  }
}
