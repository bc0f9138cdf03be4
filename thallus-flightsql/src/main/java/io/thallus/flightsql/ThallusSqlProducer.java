package io.thallus.flightsql;

import java.time.Duration;
import org.apache.arrow.flight.CancelFlightInfoRequest;
import org.apache.arrow.flight.CancelStatus;
import org.apache.arrow.flight.CloseSessionRequest;
import org.apache.arrow.flight.CloseSessionResult;
import org.apache.arrow.flight.Criteria;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.PutResult;
import org.apache.arrow.flight.Result;
import org.apache.arrow.flight.SchemaResult;
import org.apache.arrow.flight.sql.FlightSqlProducer;
import org.apache.arrow.flight.sql.impl.FlightSql;
import org.apache.arrow.memory.BufferAllocator;

/**
 * Flight SQL's commands on a Thallus server: every statement runs in the caller's session on the native protocol
 * (see {@link SessionRegistry}); results go out as the client reads them, batch by batch, on gRPC's callbacks
 * ({@link ResultStreams}). This class only hands each command to the part that serves its family: plain statements,
 * prepared statements, bulk ingest, transactions, metadata, and tables as plain Flight datasets.
 */
final class ThallusSqlProducer implements FlightSqlProducer {
  private final SessionRegistry sessions;
  private final ResultStreams results;
  private final StatementCommands statements;
  private final PreparedStatementCommands prepared;
  private final BulkIngestCommand ingest;
  private final TransactionCommands transactions;
  private final MetadataCommands metadata;
  private final PutDescriptors putDescriptors;
  private final TableFlights tableFlights;

  ThallusSqlProducer(SessionRegistry sessions, BufferAllocator allocator, byte[] lanes,
      SqlInfoValues sqlInfo, Duration putDescriptorTimeout, int maxResultMessageBytes) {
    this.sessions = sessions;
    this.results = new ResultStreams(maxResultMessageBytes);
    this.putDescriptors = new PutDescriptors(putDescriptorTimeout);
    this.statements = new StatementCommands(sessions, lanes, results, allocator);
    this.prepared = new PreparedStatementCommands(sessions, statements, allocator);
    this.ingest = new BulkIngestCommand(sessions, allocator);
    this.transactions = new TransactionCommands(sessions);
    this.metadata = new MetadataCommands(sessions, sqlInfo);
    this.tableFlights = new TableFlights(sessions, statements);
  }

  /** Results being sent now (each a DoGet, whether its client reads or not). */
  int resultsInFlight() {
    return results.inFlight();
  }

  /**
   * Every DoPut: its first message, which names the command, is waited for at most the put-descriptor timeout (see
   * {@link PutDescriptors}); then Flight SQL's dispatch, which finds the descriptor already there.
   */
  @Override
  public Runnable acceptPut(CallContext context, FlightStream flightStream, StreamListener<PutResult> ack) {
    putDescriptors.await(flightStream);
    return FlightSqlProducer.super.acceptPut(context, flightStream, ack);
  }

  // ---- statements

  @Override
  public FlightInfo getFlightInfoStatement(FlightSql.CommandStatementQuery command, CallContext context,
      FlightDescriptor descriptor) {
    return statements.flightInfo(command, context, descriptor);
  }

  @Override
  public SchemaResult getSchemaStatement(FlightSql.CommandStatementQuery command, CallContext context,
      FlightDescriptor descriptor) {
    return statements.schema(command, context);
  }

  @Override
  public void getStreamStatement(FlightSql.TicketStatementQuery ticket, CallContext context,
      ServerStreamListener listener) {
    statements.stream(ticket, listener);
  }

  @Override
  public Runnable acceptPutStatement(FlightSql.CommandStatementUpdate command, CallContext context,
      FlightStream flightStream, StreamListener<PutResult> ack) {
    return statements.update(command, context, ack);
  }

  @Override
  public void cancelFlightInfo(CancelFlightInfoRequest request, CallContext context,
      StreamListener<CancelStatus> listener) {
    statements.cancel(request, listener);
  }

  // ---- prepared statements

  @Override
  public void createPreparedStatement(FlightSql.ActionCreatePreparedStatementRequest request, CallContext context,
      StreamListener<Result> listener) {
    prepared.create(request, context, listener);
  }

  @Override
  public void closePreparedStatement(FlightSql.ActionClosePreparedStatementRequest request, CallContext context,
      StreamListener<Result> listener) {
    prepared.close(request, listener);
  }

  @Override
  public FlightInfo getFlightInfoPreparedStatement(FlightSql.CommandPreparedStatementQuery command,
      CallContext context, FlightDescriptor descriptor) {
    return prepared.flightInfo(command, descriptor);
  }

  @Override
  public void getStreamPreparedStatement(FlightSql.CommandPreparedStatementQuery command, CallContext context,
      ServerStreamListener listener) {
    prepared.stream(command, listener);
  }

  @Override
  public Runnable acceptPutPreparedStatementQuery(FlightSql.CommandPreparedStatementQuery command,
      CallContext context, FlightStream flightStream, StreamListener<PutResult> ack) {
    return prepared.bind(command, flightStream, ack);
  }

  @Override
  public Runnable acceptPutPreparedStatementUpdate(FlightSql.CommandPreparedStatementUpdate command,
      CallContext context, FlightStream flightStream, StreamListener<PutResult> ack) {
    return prepared.update(command, flightStream, ack);
  }

  // ---- bulk ingest

  @Override
  public Runnable acceptPutStatementBulkIngest(FlightSql.CommandStatementIngest command, CallContext context,
      FlightStream flightStream, StreamListener<PutResult> ack) {
    return ingest.ingest(command, context, flightStream, ack);
  }

  // ---- transactions

  @Override
  public void beginTransaction(FlightSql.ActionBeginTransactionRequest request, CallContext context,
      StreamListener<FlightSql.ActionBeginTransactionResult> listener) {
    transactions.begin(context, listener);
  }

  @Override
  public void endTransaction(FlightSql.ActionEndTransactionRequest request, CallContext context,
      StreamListener<Result> listener) {
    transactions.end(request, listener);
  }

  @Override
  public void beginSavepoint(FlightSql.ActionBeginSavepointRequest request, CallContext context,
      StreamListener<FlightSql.ActionBeginSavepointResult> listener) {
    transactions.savepoint(listener);
  }

  @Override
  public void endSavepoint(FlightSql.ActionEndSavepointRequest request, CallContext context,
      StreamListener<Result> listener) {
    transactions.savepoint(listener);
  }

  // ---- sessions

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
    return MetadataCommands.info(request, descriptor, Schemas.GET_SQL_INFO_SCHEMA);
  }

  @Override
  public void getStreamSqlInfo(FlightSql.CommandGetSqlInfo command, CallContext context,
      ServerStreamListener listener) {
    metadata.sqlInfo(command, context, listener);
  }

  @Override
  public FlightInfo getFlightInfoCatalogs(FlightSql.CommandGetCatalogs request, CallContext context,
      FlightDescriptor descriptor) {
    return MetadataCommands.info(request, descriptor, Schemas.GET_CATALOGS_SCHEMA);
  }

  @Override
  public void getStreamCatalogs(CallContext context, ServerStreamListener listener) {
    metadata.catalogs(context, listener);
  }

  @Override
  public FlightInfo getFlightInfoSchemas(FlightSql.CommandGetDbSchemas request, CallContext context,
      FlightDescriptor descriptor) {
    return MetadataCommands.info(request, descriptor, Schemas.GET_SCHEMAS_SCHEMA);
  }

  @Override
  public void getStreamSchemas(FlightSql.CommandGetDbSchemas command, CallContext context,
      ServerStreamListener listener) {
    metadata.schemas(command, context, listener);
  }

  @Override
  public FlightInfo getFlightInfoTables(FlightSql.CommandGetTables request, CallContext context,
      FlightDescriptor descriptor) {
    return MetadataCommands.info(request, descriptor, MetadataCommands.tablesSchema(request));
  }

  @Override
  public void getStreamTables(FlightSql.CommandGetTables command, CallContext context,
      ServerStreamListener listener) {
    metadata.tables(command, context, listener);
  }

  @Override
  public FlightInfo getFlightInfoTableTypes(FlightSql.CommandGetTableTypes request, CallContext context,
      FlightDescriptor descriptor) {
    return MetadataCommands.info(request, descriptor, Schemas.GET_TABLE_TYPES_SCHEMA);
  }

  @Override
  public void getStreamTableTypes(CallContext context, ServerStreamListener listener) {
    metadata.tableTypes(context, listener);
  }

  @Override
  public FlightInfo getFlightInfoPrimaryKeys(FlightSql.CommandGetPrimaryKeys request, CallContext context,
      FlightDescriptor descriptor) {
    return MetadataCommands.info(request, descriptor, Schemas.GET_PRIMARY_KEYS_SCHEMA);
  }

  @Override
  public void getStreamPrimaryKeys(FlightSql.CommandGetPrimaryKeys command, CallContext context,
      ServerStreamListener listener) {
    metadata.primaryKeys(command, context, listener);
  }

  @Override
  public FlightInfo getFlightInfoTypeInfo(FlightSql.CommandGetXdbcTypeInfo request, CallContext context,
      FlightDescriptor descriptor) {
    return MetadataCommands.info(request, descriptor, Schemas.GET_TYPE_INFO_SCHEMA);
  }

  @Override
  public void getStreamTypeInfo(FlightSql.CommandGetXdbcTypeInfo request, CallContext context,
      ServerStreamListener listener) {
    metadata.typeInfo(request, context, listener);
  }

  // ---- foreign keys

  @Override
  public FlightInfo getFlightInfoExportedKeys(FlightSql.CommandGetExportedKeys request, CallContext context,
      FlightDescriptor descriptor) {
    return MetadataCommands.info(request, descriptor, Schemas.GET_EXPORTED_KEYS_SCHEMA);
  }

  @Override
  public FlightInfo getFlightInfoImportedKeys(FlightSql.CommandGetImportedKeys request, CallContext context,
      FlightDescriptor descriptor) {
    return MetadataCommands.info(request, descriptor, Schemas.GET_IMPORTED_KEYS_SCHEMA);
  }

  @Override
  public FlightInfo getFlightInfoCrossReference(FlightSql.CommandGetCrossReference request, CallContext context,
      FlightDescriptor descriptor) {
    return MetadataCommands.info(request, descriptor, Schemas.GET_CROSS_REFERENCE_SCHEMA);
  }

  @Override
  public void getStreamExportedKeys(FlightSql.CommandGetExportedKeys command, CallContext context,
      ServerStreamListener listener) {
    metadata.exportedKeys(command, context, listener);
  }

  @Override
  public void getStreamImportedKeys(FlightSql.CommandGetImportedKeys command, CallContext context,
      ServerStreamListener listener) {
    metadata.importedKeys(command, context, listener);
  }

  @Override
  public void getStreamCrossReference(FlightSql.CommandGetCrossReference command, CallContext context,
      ServerStreamListener listener) {
    metadata.crossReference(command, context, listener);
  }

  // ---- tables as flights (plain Flight clients)

  @Override
  public void listFlights(CallContext context, Criteria criteria, StreamListener<FlightInfo> listener) {
    tableFlights.list(context, criteria, listener);
  }

  /** Flight SQL's commands, or (a path descriptor) a table as a flight: see {@link TableFlights}. */
  @Override
  public FlightInfo getFlightInfo(CallContext context, FlightDescriptor descriptor) {
    return descriptor.isCommand() ? FlightSqlProducer.super.getFlightInfo(context, descriptor)
        : tableFlights.flightInfo(context, descriptor);
  }

  @Override
  public SchemaResult getSchema(CallContext context, FlightDescriptor descriptor) {
    return descriptor.isCommand() ? FlightSqlProducer.super.getSchema(context, descriptor)
        : tableFlights.schema(context, descriptor);
  }

  @Override
  public void close() {
    // The sessions belong to the server, which closes them.
    results.close();
    putDescriptors.close();
  }
}
