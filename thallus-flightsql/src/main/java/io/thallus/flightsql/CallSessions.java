package io.thallus.flightsql;

import com.google.protobuf.ByteString;
import org.apache.arrow.flight.FlightProducer.CallContext;

/**
 * Which session a Flight SQL call runs in: the caller's own (its peer identity names it), or the one of the
 * transaction its command names, whose statements must all run on that transaction's native connection.
 */
final class CallSessions {
  private final SessionRegistry registry;

  CallSessions(SessionRegistry registry) {
    this.registry = registry;
  }

  /** The caller's session. */
  FlightSession caller(CallContext context) {
    return registry.require(context.peerIdentity(), "session");
  }

  /** The session of the call, or of the transaction the command names. */
  FlightSession of(CallContext context, ByteString transactionId) {
    String transaction = transactionId(transactionId);
    return transaction != null ? registry.transaction(transaction) : caller(context);
  }

  /** The session a kept statement (prepared or planned) runs in: its transaction's, or the one that made it. */
  FlightSession of(String sessionId, String transactionId) {
    return transactionId != null ? registry.transaction(transactionId) : registry.require(sessionId, "session");
  }

  /** The transaction a command names; null for none (an empty id is none). */
  static String transactionId(ByteString transactionId) {
    return transactionId == null || transactionId.isEmpty() ? null : transactionId.toStringUtf8();
  }
}
