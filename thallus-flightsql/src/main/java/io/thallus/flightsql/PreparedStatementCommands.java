package io.thallus.flightsql;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import io.thallus.QueryRequest;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.ThallusStream;
import io.thallus.StatementDescription;
import io.thallus.StatementKind;
import org.apache.arrow.vector.types.pojo.ArrowType;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightProducer.CallContext;
import org.apache.arrow.flight.FlightProducer.ServerStreamListener;
import org.apache.arrow.flight.FlightProducer.StreamListener;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.PutResult;
import org.apache.arrow.flight.Result;
import org.apache.arrow.flight.sql.impl.FlightSql;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Flight SQL's prepared statements: made with the schemas DuckDB plans for their rows and parameters, bound with
 * parameter rows a DoPut brings, then run as a query (GetFlightInfo and DoGet, one row of parameters) or as an
 * update (a DoPut, once per row), until the client closes them.
 */
final class PreparedStatementCommands {
  private final SessionRegistry registry;
  private final CallSessions sessions;
  /** Runs a prepared query as a planned statement: its ticket and its DoGet are a plain statement's. */
  private final StatementCommands statements;
  private final BufferAllocator allocator;

  PreparedStatementCommands(SessionRegistry registry, StatementCommands statements, BufferAllocator allocator) {
    this.registry = registry;
    this.sessions = new CallSessions(registry);
    this.statements = statements;
    this.allocator = allocator;
  }

  void create(FlightSql.ActionCreatePreparedStatementRequest request, CallContext context,
      StreamListener<Result> listener) {
    try {
      FlightSession session = sessions.of(context, request.getTransactionId());
      String sql = request.getQuery();
      StatementDescription description = StatementCommands.describe(session, sql);
      Schema parameterSchema = parameterSchema(description);
      Schema datasetSchema = StatementCommands.rowsSchema(description);
      // Prepared in the transaction the request names (DuckDB plans it there), kept by that transaction's session.
      String id = registry.addPrepared(new Statements.Prepared(session.id(), sql, description.kind(), datasetSchema,
          parameterSchema));
      FlightSql.ActionCreatePreparedStatementResult result = FlightSql.ActionCreatePreparedStatementResult
          .newBuilder()
          .setPreparedStatementHandle(ByteString.copyFromUtf8(id))
          .setDatasetSchema(Metadata.serialize(datasetSchema))
          .setParameterSchema(Metadata.serialize(parameterSchema))
          .build();
      listener.onNext(new Result(Any.pack(result).toByteArray()));
      listener.onCompleted();
    } catch (RuntimeException e) {
      listener.onError(FlightErrors.of(e));
    }
  }

  /**
   * The schema a client binds the statement's placeholders with: the engine's type for each, in order; one the engine
   * cannot tell before a value is bound is bound as text, which DuckDB casts from; times and timestamps in the unit
   * the Flight SQL JDBC driver writes ({@link AnnouncedParameterTypes}).
   */
  private static Schema parameterSchema(StatementDescription description) {
    List<Field> fields = new ArrayList<>();
    for (Field parameter : description.parameters()) {
      ArrowType type = parameter.getType() instanceof ArrowType.Null ? ArrowType.Utf8.INSTANCE
          : AnnouncedParameterTypes.announced(parameter.getType());
      fields.add(new Field(parameter.getName(), FieldType.nullable(type), parameter.getChildren()));
    }
    return new Schema(fields);
  }

  void close(FlightSql.ActionClosePreparedStatementRequest request, StreamListener<Result> listener) {
    registry.closePrepared(request.getPreparedStatementHandle().toStringUtf8());
    listener.onCompleted();
  }

  private Statements.Prepared prepared(ByteString handle) {
    return registry.prepared(handle.toStringUtf8());
  }

  /** The session a prepared statement runs in: its own, in the transaction open there now (if any). */
  private FlightSession sessionOf(Statements.Prepared prepared) {
    return registry.require(prepared.sessionId(), "session of the prepared statement");
  }

  /** The one row of parameters a query runs with (none bound: no parameters). */
  private static List<Object> singleRow(Statements.Prepared prepared) {
    List<List<Object>> rows = prepared.rows();
    if (rows.size() > 1) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "a query runs with one row of parameters; "
          + rows.size() + " were bound");
    }
    return rows.isEmpty() ? List.of() : rows.get(0);
  }

  /**
   * Plans the prepared query with its bound row as a pending statement, whose ticket the client then reads; one
   * without rows runs now.
   */
  FlightInfo flightInfo(FlightSql.CommandPreparedStatementQuery command, FlightDescriptor descriptor) {
    try {
      Statements.Prepared prepared = prepared(command.getPreparedStatementHandle());
      List<Object> parameters = singleRow(prepared);
      if (prepared.kind() != StatementKind.QUERY) {
        return statements.runNow(sessionOf(prepared), descriptor, prepared.sql(), parameters);
      }
      // A Thallus lane runs only the ticket's SQL, on a connection of its own: no parameters, no transaction.
      boolean lanesAllowed = parameters.isEmpty() && prepared.parameterSchema().getFields().isEmpty()
          && !registry.inTransaction(prepared.sessionId());
      Schema schema = parameters.isEmpty() ? prepared.datasetSchema()
          : boundSchema(sessionOf(prepared), prepared.sql(), parameters);
      // No transaction id: its DoGet runs in the session, in the transaction open there then, as the statement does.
      return statements.keep(new Statements.Pending(prepared.sessionId(), prepared.sql(), null, parameters), schema,
          descriptor, lanesAllowed);
    } catch (RuntimeException e) {
      throw FlightErrors.of(e);
    }
  }

  /**
   * The schema of the query's rows with {@code parameters} bound, as its DoGet will send them. The types of the bound
   * values decide it (DuckDB binds {@code SELECT ? + 1} with an INTEGER as INTEGER, with a BIGINT as BIGINT, and
   * resolves {@code octet_length(?)} only once it sees a BLOB), so the schema planned when the statement was prepared,
   * before any value, may differ from the rows': a Flight client compares the two and refuses a mismatch. The
   * server plans the query with the values under LIMIT 0 and sends no row.
   */
  private static Schema boundSchema(FlightSession session, String sql, List<Object> parameters) {
    return DecodedBatch.schema(session.call(client -> client.schema(QueryRequest.builder(sql).parameters(parameters).build())));
  }

  /** Runs the prepared query with its bound row and sends its rows as the client reads them. */
  void stream(FlightSql.CommandPreparedStatementQuery command, ServerStreamListener listener) {
    try {
      Statements.Prepared prepared = prepared(command.getPreparedStatementHandle());
      FlightSession session = sessionOf(prepared);
      statements.run(session, QueryRequest.builder(prepared.sql()).parameters(singleRow(prepared)).build(), listener);
    } catch (RuntimeException e) {
      listener.error(FlightErrors.of(e));
    }
  }

  /** Binds the parameter rows a DoPut brings to the prepared query, in place of those bound before. */
  Runnable bind(FlightSql.CommandPreparedStatementQuery command, FlightStream flightStream,
      StreamListener<PutResult> ack) {
    return DoPuts.answering(ack, () -> {
      Statements.Prepared prepared = prepared(command.getPreparedStatementHandle());
      VectorSchemaRoot rows = DoPuts.readAll(flightStream, sessionOf(prepared).allocator());
      prepared.bind(rows);
      ack.onCompleted();
    });
  }

  /** Runs the prepared update once for each parameter row the DoPut brings (or with its bound row) and counts. */
  Runnable update(FlightSql.CommandPreparedStatementUpdate command, FlightStream flightStream,
      StreamListener<PutResult> ack) {
    return DoPuts.answering(ack, () -> {
      Statements.Prepared prepared = prepared(command.getPreparedStatementHandle());
      FlightSession session = sessionOf(prepared);
      long count;
      try (VectorSchemaRoot rows = DoPuts.readAll(flightStream, session.allocator())) {
        QueryRequest.Builder request = QueryRequest.builder(prepared.sql());
        if (rows != null && rows.getRowCount() > 0) {
          request.parameterRows(rows);
        } else if (!prepared.parameterSchema().getFields().isEmpty()) {
          request.parameters(singleRow(prepared));
        }
        try (ThallusStream stream = session.call(client -> client.query(request.build()))) {
          count = UpdateCounts.read(stream);
        }
      }
      DoPuts.acknowledge(ack, count, allocator);
    });
  }
}
