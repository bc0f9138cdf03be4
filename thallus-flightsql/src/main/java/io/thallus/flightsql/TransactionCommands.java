package io.thallus.flightsql;

import com.google.protobuf.ByteString;
import io.thallus.QueryRequest;
import io.thallus.ThallusStream;
import org.apache.arrow.flight.FlightProducer.CallContext;
import org.apache.arrow.flight.FlightProducer.StreamListener;
import org.apache.arrow.flight.Result;
import org.apache.arrow.flight.sql.impl.FlightSql;

/**
 * Flight SQL's transactions: each is the caller's session's DuckDB transaction under an id of its own, which the
 * statements of the transaction name; it ends with COMMIT or ROLLBACK. DuckDB has no savepoints.
 */
final class TransactionCommands {
  private final SessionRegistry registry;
  private final CallSessions sessions;

  TransactionCommands(SessionRegistry registry) {
    this.registry = registry;
    this.sessions = new CallSessions(registry);
  }

  void begin(CallContext context, StreamListener<FlightSql.ActionBeginTransactionResult> listener) {
    try {
      FlightSession session = sessions.caller(context);
      String id = registry.beginTransaction(session);
      try (ThallusStream stream = session.call(client -> client.query(QueryRequest.of("BEGIN TRANSACTION")))) {
        UpdateCounts.read(stream);
      } catch (RuntimeException e) {
        registry.endTransaction(id);
        throw e;
      }
      listener.onNext(FlightSql.ActionBeginTransactionResult.newBuilder()
          .setTransactionId(ByteString.copyFromUtf8(id)).build());
      listener.onCompleted();
    } catch (RuntimeException e) {
      listener.onError(FlightErrors.of(e));
    }
  }

  void end(FlightSql.ActionEndTransactionRequest request, StreamListener<Result> listener) {
    try {
      String id = request.getTransactionId().toStringUtf8();
      FlightSession session = registry.transaction(id);
      String sql = switch (request.getAction()) {
        case END_TRANSACTION_COMMIT -> "COMMIT";
        case END_TRANSACTION_ROLLBACK -> "ROLLBACK";
        default -> throw FlightErrors.invalid("end a transaction with COMMIT or ROLLBACK, not " + request.getAction());
      };
      try (ThallusStream stream = session.call(client -> client.query(QueryRequest.of(sql)))) {
        UpdateCounts.read(stream);
      } finally {
        // DuckDB ends the transaction on a failed COMMIT too.
        registry.endTransaction(id);
      }
      listener.onCompleted();
    } catch (RuntimeException e) {
      listener.onError(FlightErrors.of(e));
    }
  }

  void savepoint(StreamListener<?> listener) {
    listener.onError(FlightErrors.unsupported("SAVEPOINT (DuckDB has none)"));
  }
}
