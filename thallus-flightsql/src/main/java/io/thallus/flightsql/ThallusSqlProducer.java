package io.thallus.flightsql;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import io.thallus.IngestMode;
import io.thallus.IngestRequest;
import io.thallus.IngestResult;
import io.thallus.QueryRequest;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.ThallusIngest;
import io.thallus.ThallusStream;
import io.thallus.engine.QuerySpec;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.CancelFlightInfoRequest;
import org.apache.arrow.flight.CancelStatus;
import org.apache.arrow.flight.CloseSessionRequest;
import org.apache.arrow.flight.CloseSessionResult;
import org.apache.arrow.flight.Criteria;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.PutResult;
import org.apache.arrow.flight.Result;
import org.apache.arrow.flight.SchemaResult;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.flight.sql.FlightSqlProducer;
import org.apache.arrow.flight.sql.SqlInfoBuilder;
import org.apache.arrow.flight.sql.impl.FlightSql;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.arrow.vector.util.TransferPair;
import org.apache.arrow.vector.util.VectorSchemaRootAppender;

/**
 * Flight SQL's commands on a Thallus server: every statement runs in the caller's session on the native protocol
 * (see {@link SessionRegistry}); results go out as the client reads them, batch by batch, on gRPC's callbacks
 * ({@link ResultSender}).
 */
final class ThallusSqlProducer implements FlightSqlProducer {
  /** Statements whose answer is rows: their schema is planned without running them. */
  private static final Pattern RETURNS_ROWS = Pattern.compile(
      "(?is)^\\s*(\\(|SELECT\\b|WITH\\b|FROM\\b|VALUES\\b|TABLE\\b|SHOW\\b|DESCRIBE\\b|SUMMARIZE\\b|EXPLAIN\\b"
          + "|PRAGMA\\b|CALL\\b)");
  /** How long a result waits for a client that reads nothing before the server gives up on it. */
  private static final long STALL_MILLIS = TimeUnit.MINUTES.toMillis(5);

  private final SessionRegistry sessions;
  private final BufferAllocator allocator;
  private final List<Location> lanes;
  private final SqlInfoBuilder sqlInfo;
  /** Checks results whose client stopped reading (see {@link ResultSender}). */
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(runnable -> {
    Thread thread = new Thread(runnable, "thallus-flightsql-results");
    thread.setDaemon(true);
    return thread;
  });
  private final AtomicInteger sending = new AtomicInteger();

  ThallusSqlProducer(SessionRegistry sessions, BufferAllocator allocator, List<Location> lanes,
      SqlInfoBuilder sqlInfo) {
    this.sessions = sessions;
    this.allocator = allocator;
    this.lanes = List.copyOf(lanes);
    this.sqlInfo = sqlInfo;
  }

  // ---- sessions

  private FlightSession caller(CallContext context) {
    return sessions.require(context.peerIdentity(), "session");
  }

  /** The session of the call, or of the transaction the command names. */
  private FlightSession sessionOf(CallContext context, ByteString transactionId) {
    if (transactionId != null && !transactionId.isEmpty()) {
      return sessions.transaction(transactionId.toStringUtf8());
    }
    return caller(context);
  }

  static boolean returnsRows(String sql) {
    return RETURNS_ROWS.matcher(sql).lookingAt();
  }

  private static String txn(ByteString transactionId) {
    return transactionId == null || transactionId.isEmpty() ? null : transactionId.toStringUtf8();
  }

  // ---- planning

  /**
   * Whether the SQL may have placeholders ({@code ?}, {@code $1}) outside string literals, quoted names and
   * comments: without any, asking DuckDB for their types (a round trip) is skipped.
   */
  static boolean mayHavePlaceholders(String sql) {
    for (int i = 0; i < sql.length(); i++) {
      char c = sql.charAt(i);
      if (c == '\'' || c == '"') {
        int end = sql.indexOf(c, i + 1);
        if (end < 0) {
          return true;
        }
        i = end;
      } else if (c == '-' && i + 1 < sql.length() && sql.charAt(i + 1) == '-') {
        int end = sql.indexOf('\n', i);
        if (end < 0) {
          return false;
        }
        i = end;
      } else if (c == '/' && i + 1 < sql.length() && sql.charAt(i + 1) == '*') {
        int end = sql.indexOf("*/", i + 2);
        if (end < 0) {
          return true;
        }
        i = end + 1;
      } else if (c == '?' || c == '$') {
        return true;
      }
    }
    return false;
  }

  private static List<String> parameterTypes(FlightSession session, String sql) {
    if (!mayHavePlaceholders(sql)) {
      return List.of();
    }
    QueryRequest request = QueryRequest.builder(sql).option(QuerySpec.DESCRIBE_PARAMETERS, "true").build();
    try (ThallusStream stream = session.client().query(request)) {
      List<String> types = new ArrayList<>();
      while (stream.hasNext()) {
        try (VectorSchemaRoot batch = stream.next()) {
          if (batch.getRowCount() > 0) {
            for (Object type : (List<?>) batch.getVector(0).getObject(0)) {
              types.add(String.valueOf(type));
            }
          }
        }
      }
      return types;
    }
  }

  /** The schema of a statement's rows, planned by DuckDB; no fields for a statement that answers an update count. */
  private static Schema plan(FlightSession session, String sql, List<Object> parameters) {
    if (!returnsRows(sql)) {
      return new Schema(List.of());
    }
    return DecodedBatch.schema(session.client().schema(QueryRequest.builder(sql).parameters(parameters).build()));
  }

  /**
   * One endpoint for the statement. With lanes it lists this server first (the connection the client has) and then
   * the Thallus locations; a client that knows no {@code thallus+} scheme uses the first.
   */
  private FlightInfo info(Schema schema, FlightDescriptor descriptor, String id, String sql, boolean lanesAllowed) {
    FlightSql.TicketStatementQuery ticket = FlightSql.TicketStatementQuery.newBuilder()
        .setStatementHandle(ByteString.copyFrom(StatementHandles.encode(id, sql))).build();
    Ticket flightTicket = new Ticket(Any.pack(ticket).toByteArray());
    FlightEndpoint endpoint;
    if (lanesAllowed && !lanes.isEmpty()) {
      List<Location> locations = new ArrayList<>();
      locations.add(Location.reuseConnection());
      locations.addAll(lanes);
      endpoint = new FlightEndpoint(flightTicket, locations.toArray(Location[]::new));
    } else {
      endpoint = new FlightEndpoint(flightTicket);
    }
    return new FlightInfo(schema, descriptor, List.of(endpoint), -1, -1);
  }

  // ---- statements

  @Override
  public FlightInfo getFlightInfoStatement(FlightSql.CommandStatementQuery command, CallContext context,
      FlightDescriptor descriptor) {
    try {
      FlightSession session = sessionOf(context, command.getTransactionId());
      String sql = command.getQuery();
      if (!returnsRows(sql)) {
        return ranAlready(session, descriptor, sql, List.of(), txn(command.getTransactionId()));
      }
      Schema schema = plan(session, sql, List.of());
      String id = sessions.addPending(new Statements.Pending(session.id(), sql, txn(command.getTransactionId()),
          List.of()));
      return info(schema, descriptor, id, sql, txn(command.getTransactionId()) == null);
    } catch (RuntimeException e) {
      throw FlightErrors.of(e);
    }
  }

  /**
   * A statement without rows (DDL, DML, SET) sent as a query runs now, as GetFlightInfo answers: Flight clients
   * (ADBC's {@code execute}) read no stream for it. Its ticket then yields no rows.
   */
  private FlightInfo ranAlready(FlightSession session, FlightDescriptor descriptor, String sql,
      List<Object> parameters, String transactionId) {
    try (ThallusStream stream = session.client().query(QueryRequest.builder(sql).parameters(parameters).build())) {
      updateCount(stream);
    }
    return info(new Schema(List.of()), descriptor, StatementHandles.RAN, sql, false);
  }

  @Override
  public SchemaResult getSchemaStatement(FlightSql.CommandStatementQuery command, CallContext context,
      FlightDescriptor descriptor) {
    try {
      return new SchemaResult(plan(sessionOf(context, command.getTransactionId()), command.getQuery(), List.of()));
    } catch (RuntimeException e) {
      throw FlightErrors.of(e);
    }
  }

  @Override
  public void getStreamStatement(FlightSql.TicketStatementQuery ticket, CallContext context,
      ServerStreamListener listener) {
    try {
      String id = StatementHandles.id(ticket.getStatementHandle().toByteArray());
      if (id.equals(StatementHandles.RAN)) {
        try (VectorSchemaRoot empty = VectorSchemaRoot.create(new Schema(List.of()), allocator)) {
          listener.start(empty);
          listener.completed();
        }
        return;
      }
      Statements.Pending pending = sessions.pending(id);
      FlightSession session = pending.transactionId() != null ? sessions.transaction(pending.transactionId())
          : sessions.require(pending.sessionId(), "session");
      QueryRequest request = QueryRequest.builder(pending.sql()).parameters(pending.parameters()).build();
      ThallusStream stream = session.client().query(request);
      if (!pending.started(stream)) {
        stream.close();
        throw CallStatus.CANCELLED.withDescription("the statement was cancelled").toRuntimeException();
      }
      send(stream, session, listener, () -> {
        pending.finished();
        sessions.removePending(id);
      });
    } catch (RuntimeException e) {
      listener.error(FlightErrors.of(e));
    }
  }

  @Override
  public void getStreamPreparedStatement(FlightSql.CommandPreparedStatementQuery command, CallContext context,
      ServerStreamListener listener) {
    try {
      Statements.Prepared prepared = sessions.prepared(command.getPreparedStatementHandle().toStringUtf8());
      FlightSession session = preparedSession(prepared);
      send(session.client().query(QueryRequest.builder(prepared.sql()).parameters(singleRow(prepared)).build()),
          session, listener, () -> {});
    } catch (RuntimeException e) {
      listener.error(FlightErrors.of(e));
    }
  }

  /** Sends a stream's batches as the client reads them, on gRPC's callbacks ({@link ResultSender}). */
  private void send(ThallusStream stream, FlightSession session, ServerStreamListener listener, Runnable onEnd) {
    sending.incrementAndGet();
    new ResultSender(stream, session, listener, STALL_MILLIS, () -> {
      sending.decrementAndGet();
      onEnd.run();
    }).start(timer);
  }

  /** Results being sent now (each a DoGet, whether its client reads or not). */
  int resultsInFlight() {
    return sending.get();
  }

  private static long updateCount(ThallusStream stream) {
    long total = 0;
    boolean counts = stream.isUpdateCount();
    while (stream.hasNext()) {
      try (VectorSchemaRoot batch = stream.next()) {
        if (counts && batch.getFieldVectors().size() == 1 && batch.getVector(0) instanceof BigIntVector vector) {
          for (int row = 0; row < batch.getRowCount(); row++) {
            if (!vector.isNull(row)) {
              total += Math.max(0, vector.get(row));
            }
          }
        }
      }
    }
    return counts ? total : -1;
  }

  private void acknowledge(StreamListener<PutResult> ack, long count) {
    FlightSql.DoPutUpdateResult result = FlightSql.DoPutUpdateResult.newBuilder().setRecordCount(count).build();
    byte[] bytes = result.toByteArray();
    try (ArrowBuf buffer = allocator.buffer(bytes.length)) {
      buffer.writeBytes(bytes);
      ack.onNext(PutResult.metadata(buffer));
    }
    ack.onCompleted();
  }

  @Override
  public Runnable acceptPutStatement(FlightSql.CommandStatementUpdate command, CallContext context,
      FlightStream flightStream, StreamListener<PutResult> ack) {
    return () -> {
      try {
        FlightSession session = sessionOf(context, command.getTransactionId());
        long count;
        try (ThallusStream stream = session.client().query(QueryRequest.of(command.getQuery()))) {
          count = updateCount(stream);
        }
        acknowledge(ack, count);
      } catch (RuntimeException e) {
        ack.onError(FlightErrors.of(e));
      }
    };
  }

  // ---- prepared statements

  @Override
  public void createPreparedStatement(FlightSql.ActionCreatePreparedStatementRequest request, CallContext context,
      StreamListener<Result> listener) {
    try {
      FlightSession session = sessionOf(context, request.getTransactionId());
      String sql = request.getQuery();
      List<String> types = parameterTypes(session, sql);
      List<Field> parameters = new ArrayList<>();
      for (int i = 0; i < types.size(); i++) {
        parameters.add(new Field("parameter_" + (i + 1), FieldType.nullable(ArrowTypes.ofDuckDB(types.get(i))),
            null));
      }
      Schema parameterSchema = new Schema(parameters);
      Schema datasetSchema = plan(session, sql, Collections.nCopies(types.size(), null));
      String id = sessions.addPrepared(new Statements.Prepared(session.id(), sql, txn(request.getTransactionId()),
          datasetSchema, parameterSchema));
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

  @Override
  public void closePreparedStatement(FlightSql.ActionClosePreparedStatementRequest request, CallContext context,
      StreamListener<Result> listener) {
    sessions.closePrepared(request.getPreparedStatementHandle().toStringUtf8());
    listener.onCompleted();
  }

  private FlightSession preparedSession(Statements.Prepared prepared) {
    return prepared.transactionId() != null ? sessions.transaction(prepared.transactionId())
        : sessions.require(prepared.sessionId(), "session");
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

  @Override
  public FlightInfo getFlightInfoPreparedStatement(FlightSql.CommandPreparedStatementQuery command,
      CallContext context, FlightDescriptor descriptor) {
    try {
      Statements.Prepared prepared = sessions.prepared(command.getPreparedStatementHandle().toStringUtf8());
      List<Object> parameters = singleRow(prepared);
      if (!returnsRows(prepared.sql())) {
        return ranAlready(preparedSession(prepared), descriptor, prepared.sql(), parameters,
            prepared.transactionId());
      }
      String id = sessions.addPending(new Statements.Pending(prepared.sessionId(), prepared.sql(),
          prepared.transactionId(), parameters));
      boolean lanesAllowed = parameters.isEmpty() && prepared.parameterSchema().getFields().isEmpty()
          && prepared.transactionId() == null;
      return info(prepared.datasetSchema(), descriptor, id, prepared.sql(), lanesAllowed);
    } catch (RuntimeException e) {
      throw FlightErrors.of(e);
    }
  }

  /**
   * A batch gRPC received into the door's memory, moved (not copied) into the session's, so that every DoPut batch
   * counts against the session's {@code memoryPerClient} as it arrives; one that takes the session past it is
   * refused with {@code RESOURCE_EXHAUSTED}.
   */
  private static VectorSchemaRoot intoSessionMemory(VectorSchemaRoot batch, BufferAllocator session) {
    List<FieldVector> vectors = new ArrayList<>();
    for (FieldVector vector : batch.getFieldVectors()) {
      TransferPair transfer = vector.getTransferPair(session);
      // A transfer never fails for the target's limit (Arrow forces the accounting), so the limit is checked below.
      transfer.transfer();
      vectors.add((FieldVector) transfer.getTo());
    }
    VectorSchemaRoot moved = new VectorSchemaRoot(batch.getSchema(), vectors, batch.getRowCount());
    long held = session.getAllocatedMemory();
    if (held > session.getLimit()) {
      moved.close();
      throw ThallusException.of(StatusCode.RESOURCE_EXHAUSTED, "a DoPut batch took this session's Arrow memory to "
          + held + " bytes, over its budget of " + session.getLimit() + " bytes (memoryPerClient)");
    }
    return moved;
  }

  /** The parameter batches of a DoPut, in one root of the session's memory (null for none). */
  private static VectorSchemaRoot readParameters(FlightStream flightStream, BufferAllocator allocator) {
    VectorSchemaRoot rows = null;
    try {
      while (flightStream.next()) {
        VectorSchemaRoot batch = flightStream.getRoot();
        if (rows == null) {
          rows = intoSessionMemory(batch, allocator);
        } else {
          VectorSchemaRootAppender.append(rows, batch);
        }
      }
      return rows;
    } catch (RuntimeException e) {
      if (rows != null) {
        rows.close();
      }
      throw e;
    }
  }

  @Override
  public Runnable acceptPutPreparedStatementQuery(FlightSql.CommandPreparedStatementQuery command,
      CallContext context, FlightStream flightStream, StreamListener<PutResult> ack) {
    return () -> {
      try {
        Statements.Prepared prepared = sessions.prepared(command.getPreparedStatementHandle().toStringUtf8());
        VectorSchemaRoot rows = readParameters(flightStream, preparedSession(prepared).allocator());
        prepared.bind(rows);
        ack.onCompleted();
      } catch (RuntimeException e) {
        ack.onError(FlightErrors.of(e));
      }
    };
  }

  @Override
  public Runnable acceptPutPreparedStatementUpdate(FlightSql.CommandPreparedStatementUpdate command,
      CallContext context, FlightStream flightStream, StreamListener<PutResult> ack) {
    return () -> {
      try {
        Statements.Prepared prepared = sessions.prepared(command.getPreparedStatementHandle().toStringUtf8());
        FlightSession session = preparedSession(prepared);
        long count;
        try (VectorSchemaRoot rows = readParameters(flightStream, session.allocator())) {
          QueryRequest.Builder request = QueryRequest.builder(prepared.sql());
          if (rows != null && rows.getRowCount() > 0) {
            request.parameterRows(rows);
          } else if (!prepared.parameterSchema().getFields().isEmpty()) {
            request.parameters(singleRow(prepared));
          }
          try (ThallusStream stream = session.client().query(request.build())) {
            count = updateCount(stream);
          }
        }
        acknowledge(ack, count);
      } catch (RuntimeException e) {
        ack.onError(FlightErrors.of(e));
      }
    };
  }

  // ---- bulk ingest

  @Override
  public Runnable acceptPutStatementBulkIngest(FlightSql.CommandStatementIngest command, CallContext context,
      FlightStream flightStream, StreamListener<PutResult> ack) {
    return () -> {
      try {
        FlightSession session = sessionOf(context, command.getTransactionId());
        String table = Metadata.tableName(command.getTemporary() ? "temp" : command.hasCatalog()
            ? command.getCatalog() : null, command.hasSchema() ? command.getSchema() : null, command.getTable());
        IngestMode mode = ingestMode(session, command, table);
        if (command.getTemporary() && mode != IngestMode.APPEND) {
          throw ThallusException.of(StatusCode.UNIMPLEMENTED, "an ingest cannot create or replace a temporary table"
              + " (DuckDB creates those only with CREATE TEMP TABLE): create " + table + " so first, then ingest with"
              + " append");
        }
        IngestResult result;
        // In a named transaction the rows join it; otherwise the ingest commits on its own.
        IngestRequest request = IngestRequest.builder(table).mode(mode)
            .autoCommit(txn(command.getTransactionId()) == null).build();
        try (ThallusIngest ingest = session.client().ingest(request, flightStream.getSchema())) {
          while (flightStream.next()) {
            try (VectorSchemaRoot batch = intoSessionMemory(flightStream.getRoot(), session.allocator())) {
              ingest.write(batch);
            }
          }
          result = ingest.finish();
        }
        acknowledge(ack, result.rows());
      } catch (RuntimeException e) {
        ack.onError(FlightErrors.of(e));
      }
    };
  }

  private static IngestMode ingestMode(FlightSession session, FlightSql.CommandStatementIngest command,
      String table) {
    FlightSql.CommandStatementIngest.TableDefinitionOptions options = command.getTableDefinitionOptions();
    boolean create = options.getIfNotExist()
        != FlightSql.CommandStatementIngest.TableDefinitionOptions.TableNotExistOption.TABLE_NOT_EXIST_OPTION_FAIL;
    var ifExists = options.getIfExists();
    switch (ifExists) {
      case TABLE_EXISTS_OPTION_REPLACE:
        if (!create && !Metadata.tableExists(session, table)) {
          throw ThallusException.of(StatusCode.NOT_FOUND, "table " + table + " does not exist (the ingest may not "
              + "create it)");
        }
        return IngestMode.REPLACE;
      case TABLE_EXISTS_OPTION_APPEND:
        return create && !Metadata.tableExists(session, table) ? IngestMode.CREATE : IngestMode.APPEND;
      default:
        if (!create) {
          throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "an ingest that may neither create the table nor "
              + "add to it has nothing to do");
        }
        return IngestMode.CREATE;
    }
  }

  // ---- transactions

  @Override
  public void beginTransaction(FlightSql.ActionBeginTransactionRequest request, CallContext context,
      StreamListener<FlightSql.ActionBeginTransactionResult> listener) {
    try {
      FlightSession session = caller(context);
      String id = sessions.beginTransaction(session);
      try (ThallusStream stream = session.client().query(QueryRequest.of("BEGIN TRANSACTION"))) {
        updateCount(stream);
      } catch (RuntimeException e) {
        sessions.endTransaction(id);
        throw e;
      }
      listener.onNext(FlightSql.ActionBeginTransactionResult.newBuilder()
          .setTransactionId(ByteString.copyFromUtf8(id)).build());
      listener.onCompleted();
    } catch (RuntimeException e) {
      listener.onError(FlightErrors.of(e));
    }
  }

  @Override
  public void endTransaction(FlightSql.ActionEndTransactionRequest request, CallContext context,
      StreamListener<Result> listener) {
    try {
      String id = request.getTransactionId().toStringUtf8();
      FlightSession session = sessions.transaction(id);
      String sql = switch (request.getAction()) {
        case END_TRANSACTION_COMMIT -> "COMMIT";
        case END_TRANSACTION_ROLLBACK -> "ROLLBACK";
        default -> throw FlightErrors.invalid("end a transaction with COMMIT or ROLLBACK, not " + request.getAction());
      };
      try (ThallusStream stream = session.client().query(QueryRequest.of(sql))) {
        updateCount(stream);
      } finally {
        // DuckDB ends the transaction on a failed COMMIT too.
        sessions.endTransaction(id);
      }
      listener.onCompleted();
    } catch (RuntimeException e) {
      listener.onError(FlightErrors.of(e));
    }
  }

  @Override
  public void beginSavepoint(FlightSql.ActionBeginSavepointRequest request, CallContext context,
      StreamListener<FlightSql.ActionBeginSavepointResult> listener) {
    listener.onError(FlightErrors.unsupported("SAVEPOINT (DuckDB has none)"));
  }

  @Override
  public void endSavepoint(FlightSql.ActionEndSavepointRequest request, CallContext context,
      StreamListener<Result> listener) {
    listener.onError(FlightErrors.unsupported("SAVEPOINT (DuckDB has none)"));
  }

  // ---- cancel and sessions

  @Override
  public void cancelFlightInfo(CancelFlightInfoRequest request, CallContext context,
      StreamListener<CancelStatus> listener) {
    CancelStatus status = CancelStatus.NOT_CANCELLABLE;
    for (FlightEndpoint endpoint : request.getInfo().getEndpoints()) {
      try {
        Any any = Any.parseFrom(endpoint.getTicket().getBytes());
        if (any.is(FlightSql.TicketStatementQuery.class)) {
          String id = StatementHandles.id(any.unpack(FlightSql.TicketStatementQuery.class).getStatementHandle()
              .toByteArray());
          Statements.Pending pending = sessions.removePending(id);
          if (pending != null) {
            pending.cancel();
            status = CancelStatus.CANCELLED;
          }
        }
      } catch (com.google.protobuf.InvalidProtocolBufferException e) {
        // Not a ticket of this server: nothing of it runs here.
      }
    }
    listener.onNext(status);
    listener.onCompleted();
  }

  @Override
  public void closeSession(CloseSessionRequest request, CallContext context,
      StreamListener<CloseSessionResult> listener) {
    sessions.closeSession(context.peerIdentity());
    listener.onNext(new CloseSessionResult(CloseSessionResult.Status.CLOSED));
    listener.onCompleted();
  }

  // ---- metadata

  @Override
  public FlightInfo getFlightInfoSqlInfo(FlightSql.CommandGetSqlInfo request, CallContext context,
      FlightDescriptor descriptor) {
    return metadataInfo(request, descriptor, Schemas.GET_SQL_INFO_SCHEMA);
  }

  @Override
  public void getStreamSqlInfo(FlightSql.CommandGetSqlInfo command, CallContext context,
      ServerStreamListener listener) {
    sqlInfo.send(command.getInfoList(), listener);
  }

  private FlightInfo metadataInfo(com.google.protobuf.Message command, FlightDescriptor descriptor, Schema schema) {
    return new FlightInfo(schema, descriptor, List.of(new FlightEndpoint(new Ticket(Any.pack(command).toByteArray()))),
        -1, -1);
  }

  private void sendMetadata(CallContext context, ServerStreamListener listener,
      java.util.function.Function<FlightSession, VectorSchemaRoot> rows) {
    try {
      FlightSession session = caller(context);
      try (VectorSchemaRoot root = rows.apply(session)) {
        listener.start(root);
        listener.putNext();
        listener.completed();
      }
    } catch (RuntimeException e) {
      listener.error(FlightErrors.of(e));
    }
  }

  @Override
  public FlightInfo getFlightInfoCatalogs(FlightSql.CommandGetCatalogs request, CallContext context,
      FlightDescriptor descriptor) {
    return metadataInfo(request, descriptor, Schemas.GET_CATALOGS_SCHEMA);
  }

  @Override
  public void getStreamCatalogs(CallContext context, ServerStreamListener listener) {
    sendMetadata(context, listener, session -> Metadata.catalogs(session));
  }

  @Override
  public FlightInfo getFlightInfoSchemas(FlightSql.CommandGetDbSchemas request, CallContext context,
      FlightDescriptor descriptor) {
    return metadataInfo(request, descriptor, Schemas.GET_SCHEMAS_SCHEMA);
  }

  @Override
  public void getStreamSchemas(FlightSql.CommandGetDbSchemas command, CallContext context,
      ServerStreamListener listener) {
    sendMetadata(context, listener, session -> Metadata.schemas(session,
        command.hasCatalog() ? command.getCatalog() : null,
        command.hasDbSchemaFilterPattern() ? command.getDbSchemaFilterPattern() : null));
  }

  @Override
  public FlightInfo getFlightInfoTables(FlightSql.CommandGetTables request, CallContext context,
      FlightDescriptor descriptor) {
    return metadataInfo(request, descriptor, request.getIncludeSchema() ? Schemas.GET_TABLES_SCHEMA
        : Schemas.GET_TABLES_SCHEMA_NO_SCHEMA);
  }

  @Override
  public void getStreamTables(FlightSql.CommandGetTables command, CallContext context,
      ServerStreamListener listener) {
    sendMetadata(context, listener, session -> Metadata.tables(session,
        command.hasCatalog() ? command.getCatalog() : null,
        command.hasDbSchemaFilterPattern() ? command.getDbSchemaFilterPattern() : null,
        command.hasTableNameFilterPattern() ? command.getTableNameFilterPattern() : null,
        command.getTableTypesList(), command.getIncludeSchema()));
  }

  @Override
  public FlightInfo getFlightInfoTableTypes(FlightSql.CommandGetTableTypes request, CallContext context,
      FlightDescriptor descriptor) {
    return metadataInfo(request, descriptor, Schemas.GET_TABLE_TYPES_SCHEMA);
  }

  @Override
  public void getStreamTableTypes(CallContext context, ServerStreamListener listener) {
    sendMetadata(context, listener, session -> Metadata.tableTypes(session));
  }

  @Override
  public FlightInfo getFlightInfoPrimaryKeys(FlightSql.CommandGetPrimaryKeys request, CallContext context,
      FlightDescriptor descriptor) {
    return metadataInfo(request, descriptor, Schemas.GET_PRIMARY_KEYS_SCHEMA);
  }

  @Override
  public void getStreamPrimaryKeys(FlightSql.CommandGetPrimaryKeys command, CallContext context,
      ServerStreamListener listener) {
    sendMetadata(context, listener, session -> Metadata.primaryKeys(session,
        command.hasCatalog() ? command.getCatalog() : null, command.hasDbSchema() ? command.getDbSchema() : null,
        command.getTable()));
  }

  // ---- not supported: said so, never an empty answer

  @Override
  public FlightInfo getFlightInfoTypeInfo(FlightSql.CommandGetXdbcTypeInfo request, CallContext context,
      FlightDescriptor descriptor) {
    throw FlightErrors.unsupported("GetXdbcTypeInfo");
  }

  @Override
  public void getStreamTypeInfo(FlightSql.CommandGetXdbcTypeInfo request, CallContext context,
      ServerStreamListener listener) {
    listener.error(FlightErrors.unsupported("GetXdbcTypeInfo"));
  }

  @Override
  public FlightInfo getFlightInfoExportedKeys(FlightSql.CommandGetExportedKeys request, CallContext context,
      FlightDescriptor descriptor) {
    throw FlightErrors.unsupported("GetExportedKeys");
  }

  @Override
  public FlightInfo getFlightInfoImportedKeys(FlightSql.CommandGetImportedKeys request, CallContext context,
      FlightDescriptor descriptor) {
    throw FlightErrors.unsupported("GetImportedKeys");
  }

  @Override
  public FlightInfo getFlightInfoCrossReference(FlightSql.CommandGetCrossReference request, CallContext context,
      FlightDescriptor descriptor) {
    throw FlightErrors.unsupported("GetCrossReference");
  }

  @Override
  public void getStreamExportedKeys(FlightSql.CommandGetExportedKeys command, CallContext context,
      ServerStreamListener listener) {
    listener.error(FlightErrors.unsupported("GetExportedKeys"));
  }

  @Override
  public void getStreamImportedKeys(FlightSql.CommandGetImportedKeys command, CallContext context,
      ServerStreamListener listener) {
    listener.error(FlightErrors.unsupported("GetImportedKeys"));
  }

  @Override
  public void getStreamCrossReference(FlightSql.CommandGetCrossReference command, CallContext context,
      ServerStreamListener listener) {
    listener.error(FlightErrors.unsupported("GetCrossReference"));
  }

  @Override
  public void listFlights(CallContext context, Criteria criteria, StreamListener<FlightInfo> listener) {
    listener.onError(FlightErrors.unsupported("ListFlights"));
  }

  @Override
  public void close() {
    // The sessions belong to the server, which closes them.
    timer.shutdownNow();
  }
}
