package io.thallus.flightsql;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import io.thallus.QueryRequest;
import io.thallus.StatementDescription;
import io.thallus.StatementKind;
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
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.flight.sql.impl.FlightSql;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Flight SQL's statements from plan to rows: GetFlightInfo plans a query (plain, or prepared with its bound row) and
 * keeps it as a pending statement under the ticket it answers, until the DoGet of that ticket runs it (or
 * CancelFlightInfo cancels it); a statement without rows runs at once instead. A plain update runs in its DoPut.
 */
final class StatementCommands {
  private final SessionRegistry registry;
  private final CallSessions sessions;
  // The lanes' announcement (LaneAnnouncement), empty when the server announces none.
  private final byte[] lanes;
  private final ResultStreams results;
  private final BufferAllocator allocator;

  StatementCommands(SessionRegistry registry, byte[] lanes, ResultStreams results,
      BufferAllocator allocator) {
    this.registry = registry;
    this.sessions = new CallSessions(registry);
    this.lanes = lanes.clone();
    this.results = results;
    this.allocator = allocator;
  }

  FlightInfo flightInfo(FlightSql.CommandStatementQuery command, CallContext context, FlightDescriptor descriptor) {
    try {
      FlightSession session = sessions.of(context, command.getTransactionId());
      String sql = command.getQuery();
      StatementDescription description = describe(session, sql);
      if (description.kind() != StatementKind.QUERY) {
        return runNow(session, descriptor, sql, List.of());
      }
      Schema schema = DecodedBatch.schema(description.result());
      String transactionId = CallSessions.transactionId(command.getTransactionId());
      return keep(new Statements.Pending(session.id(), sql, transactionId, List.of()), schema, descriptor,
          transactionId == null);
    } catch (RuntimeException e) {
      throw FlightErrors.of(e);
    }
  }

  SchemaResult schema(FlightSql.CommandStatementQuery command, CallContext context) {
    try {
      return new SchemaResult(rowsSchema(describe(sessions.of(context, command.getTransactionId()),
          command.getQuery())));
    } catch (RuntimeException e) {
      throw FlightErrors.of(e);
    }
  }

  /**
   * What the statement is, as the session's engine classifies it (its kind, placeholder types and rows' schema),
   * prepared in the session and not run.
   */
  static StatementDescription describe(FlightSession session, String sql) {
    return session.call(client -> client.describeStatement(QueryRequest.of(sql)));
  }

  /** The schema of a statement's rows as a Flight client reads them; no fields for one that answers none. */
  static Schema rowsSchema(StatementDescription description) {
    return description.kind() == StatementKind.QUERY ? DecodedBatch.schema(description.result())
        : new Schema(List.of());
  }

  /** Keeps a planned statement until the DoGet of its ticket ({@link #stream}) runs it; answers that ticket. */
  FlightInfo keep(Statements.Pending pending, Schema schema, FlightDescriptor descriptor, boolean lanesAllowed) {
    String id = registry.addPending(pending);
    return ticket(schema, descriptor, id, pending.sql(), lanesAllowed);
  }

  /**
   * One endpoint for the statement, with no location: every Flight client reads it on the connection it has. Its
   * lanes, where it has some, are in the endpoint's app metadata, which only Thallus clients read
   * ({@link LaneAnnouncement}).
   */
  private FlightInfo ticket(Schema schema, FlightDescriptor descriptor, String id, String sql, boolean lanesAllowed) {
    FlightSql.TicketStatementQuery ticket = FlightSql.TicketStatementQuery.newBuilder()
        .setStatementHandle(ByteString.copyFrom(StatementHandles.encode(id, sql))).build();
    FlightEndpoint.Builder endpoint = FlightEndpoint.builder(new Ticket(Any.pack(ticket).toByteArray()));
    if (lanesAllowed && lanes.length > 0) {
      endpoint.setAppMetadata(lanes);
    }
    return new FlightInfo(schema, descriptor, List.of(endpoint.build()), -1, -1);
  }

  /**
   * A statement without rows (DDL, DML, SET) sent as a query runs now, as GetFlightInfo answers: Flight clients
   * (ADBC's {@code execute}) read no stream for it. Its ticket then yields no rows.
   */
  FlightInfo runNow(FlightSession session, FlightDescriptor descriptor, String sql, List<Object> parameters) {
    try (ThallusStream stream = session.call(client -> client.query(QueryRequest.builder(sql).parameters(parameters).build()))) {
      UpdateCounts.read(stream);
    }
    return ticket(new Schema(List.of()), descriptor, StatementHandles.RAN, sql, false);
  }

  /** Runs a query in the session now and sends its rows as the client reads them (a prepared query's DoGet). */
  void run(FlightSession session, QueryRequest request, ServerStreamListener listener) {
    results.send(session.call(client -> client.query(request)), session, listener, () -> {});
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
      ThallusStream stream = session.call(client -> client.query(request));
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
    return DoPuts.answering(ack, () -> {
      FlightSession session = sessions.of(context, command.getTransactionId());
      long count;
      try (ThallusStream stream = session.call(client -> client.query(QueryRequest.of(command.getQuery())))) {
        count = UpdateCounts.read(stream);
      }
      DoPuts.acknowledge(ack, count, allocator);
    });
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
