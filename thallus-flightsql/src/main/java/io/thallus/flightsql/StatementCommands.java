package io.thallus.flightsql;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import io.thallus.QueryRequest;
import io.thallus.ThallusStream;
import java.util.List;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.CancelFlightInfoRequest;
import org.apache.arrow.flight.CancelStatus;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightProducer.CallContext;
import org.apache.arrow.flight.FlightProducer.ServerStreamListener;
import org.apache.arrow.flight.FlightProducer.StreamListener;
import org.apache.arrow.flight.PutResult;
import org.apache.arrow.flight.SchemaResult;
import org.apache.arrow.flight.sql.impl.FlightSql;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Flight SQL's plain statements: a query is planned by GetFlightInfo and kept as a pending statement until the DoGet
 * of its ticket runs it (or CancelFlightInfo cancels it); an update runs in its DoPut.
 */
final class StatementCommands {
  private final SessionRegistry registry;
  private final CallSessions sessions;
  private final StatementPlanner planner;
  private final ResultStreams results;
  private final BufferAllocator allocator;

  StatementCommands(SessionRegistry registry, StatementPlanner planner, ResultStreams results,
      BufferAllocator allocator) {
    this.registry = registry;
    this.sessions = new CallSessions(registry);
    this.planner = planner;
    this.results = results;
    this.allocator = allocator;
  }

  FlightInfo flightInfo(FlightSql.CommandStatementQuery command, CallContext context, FlightDescriptor descriptor) {
    try {
      FlightSession session = sessions.of(context, command.getTransactionId());
      String sql = command.getQuery();
      if (!StatementText.returnsRows(sql)) {
        return planner.runNow(session, descriptor, sql, List.of());
      }
      Schema schema = StatementPlanner.schema(session, sql, List.of());
      String transactionId = CallSessions.transactionId(command.getTransactionId());
      String id = registry.addPending(new Statements.Pending(session.id(), sql, transactionId, List.of()));
      return planner.ticket(schema, descriptor, id, sql, transactionId == null);
    } catch (RuntimeException e) {
      throw FlightErrors.of(e);
    }
  }

  SchemaResult schema(FlightSql.CommandStatementQuery command, CallContext context) {
    try {
      return new SchemaResult(StatementPlanner.schema(sessions.of(context, command.getTransactionId()),
          command.getQuery(), List.of()));
    } catch (RuntimeException e) {
      throw FlightErrors.of(e);
    }
  }

  /** Runs the statement a ticket names and sends its rows as the client reads them. */
  void stream(FlightSql.TicketStatementQuery ticket, ServerStreamListener listener) {
    try {
      String id = StatementHandles.id(ticket.getStatementHandle().toByteArray());
      if (id.equals(StatementHandles.RAN)) {
        try (VectorSchemaRoot empty = VectorSchemaRoot.create(new Schema(List.of()), allocator)) {
          listener.start(empty);
          listener.completed();
        }
        return;
      }
      Statements.Pending pending = registry.pending(id);
      FlightSession session = sessions.of(pending.sessionId(), pending.transactionId());
      QueryRequest request = QueryRequest.builder(pending.sql()).parameters(pending.parameters()).build();
      ThallusStream stream = session.client().query(request);
      if (!pending.started(stream)) {
        stream.close();
        throw CallStatus.CANCELLED.withDescription("the statement was cancelled").toRuntimeException();
      }
      results.send(stream, session, listener, () -> {
        pending.finished();
        registry.removePending(id);
      });
    } catch (RuntimeException e) {
      listener.error(FlightErrors.of(e));
    }
  }

  Runnable update(FlightSql.CommandStatementUpdate command, CallContext context, StreamListener<PutResult> ack) {
    return () -> {
      try {
        FlightSession session = sessions.of(context, command.getTransactionId());
        long count;
        try (ThallusStream stream = session.client().query(QueryRequest.of(command.getQuery()))) {
          count = UpdateCounts.read(stream);
        }
        DoPutBatches.acknowledge(ack, count, allocator);
      } catch (RuntimeException e) {
        ack.onError(FlightErrors.of(e));
      }
    };
  }

  /** Cancels the planned statements of this server among the endpoints: those running stop, the others never start. */
  void cancel(CancelFlightInfoRequest request, StreamListener<CancelStatus> listener) {
    CancelStatus status = CancelStatus.NOT_CANCELLABLE;
    for (FlightEndpoint endpoint : request.getInfo().getEndpoints()) {
      try {
        Any any = Any.parseFrom(endpoint.getTicket().getBytes());
        if (any.is(FlightSql.TicketStatementQuery.class)) {
          String id = StatementHandles.id(any.unpack(FlightSql.TicketStatementQuery.class).getStatementHandle()
              .toByteArray());
          Statements.Pending pending = registry.removePending(id);
          if (pending != null) {
            pending.cancel();
            status = CancelStatus.CANCELLED;
          }
        }
      } catch (InvalidProtocolBufferException e) {
        // Not a ticket of this server: nothing of it runs here.
      }
    }
    listener.onNext(status);
    listener.onCompleted();
  }
}
